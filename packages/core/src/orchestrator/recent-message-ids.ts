import type { Logger } from "../logging/logger.js";
import type { Store } from "../store/create-store.js";
import { readCursor } from "./backfill.js";

/** Ids kept per thread; past this the oldest go first (a thread's ids are fresh, mostly). */
const MAX_IDS = 4096;

/**
 * The channel message ids a thread has accepted lately — prompts, and commands that act on it
 * (`/new`, `/compact`, steer, abort) — so that a message delivered again is not run or acted on
 * twice: Telegram sends a batch of updates again when guppy stopped before its next poll
 * confirmed it (a `/stop` would stop a later run). An active actor keeps them in memory; they
 * are read when it first needs them: the ids its inbox holds (unanswered prompts, and answered
 * prompts and handled commands since the thread was last cleared) and those of the log.jsonl
 * entries in the 64 KB before its log cursor — a bounded read, once per activation. Entries
 * after the cursor do not count: a channel may log a message before it sends it as a prompt
 * (backfill skips it then), and the context has not caught up with them.
 */
export interface RecentMessageIds {
  has(messageId: string): boolean;
  add(messageId: string): void;
}

export function loadRecentMessageIds(
  store: Store,
  threadId: string,
  inboxIds: Iterable<string>,
  logger: Logger,
): RecentMessageIds {
  const ids = new Set<string>();
  const add = (id: string) => {
    ids.delete(id);
    ids.add(id);
    if (ids.size > MAX_IDS) ids.delete(ids.values().next().value as string);
  };
  try {
    const cursor = readCursor(store, threadId);
    const before = cursor.offset === undefined ? [] : store.readLogBefore(threadId, cursor.offset);
    for (const entry of before ?? []) if (entry.messageId) add(entry.messageId);
  } catch (error) {
    logger.warn(`Could not read the recent log of ${threadId} for message ids`, {
      error: String(error),
    });
  }
  for (const id of inboxIds) add(id);
  return { has: (id) => ids.has(id), add };
}
