import { isLogEntry, type LogEntry, readLinesBackward } from "@guppy/core/thread-layout";

/** GET /v1/threads/{id}/messages's page: the last `limit` messages, or those before `before`. */
export interface LogPageRequest {
  limit: number;
  /** A message id: the page ends just before that message. */
  before?: string;
}

export type LogPage =
  | {
      status: "found";
      /** Oldest first. */
      entries: LogEntry[];
      /** The id to pass as `before` for the older page; null when this page starts the log. */
      nextBefore: string | null;
    }
  | { status: "unknown_before" };

/** How many messages a page has when `before` comes without `limit`. */
export const DEFAULT_PAGE_LIMIT = 100;
/** The most messages one page gives. */
export const MAX_PAGE_LIMIT = 1000;

/**
 * One page of a thread's log.jsonl, read from its end (in the HTTP worker): the newest pages of a
 * log of years cost what they hold. A torn or foreign line is left out, as readLogFile does.
 */
export async function readLogPage(path: string, request: LogPageRequest): Promise<LogPage> {
  const newestFirst: LogEntry[] = [];
  let started = request.before === undefined;
  for await (const { text: line } of readLinesBackward(path)) {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue; // A line cut short by a crash mid-write.
    }
    if (!isLogEntry(value)) continue;
    if (!started) {
      started = value.messageId === request.before;
      continue;
    }
    if (newestFirst.length === request.limit) {
      // One more message is older than the page: the client can ask for it.
      const oldest = newestFirst.at(-1);
      return {
        status: "found",
        entries: newestFirst.reverse(),
        nextBefore: oldest?.messageId ?? null,
      };
    }
    newestFirst.push(value);
  }
  if (!started) return { status: "unknown_before" };
  return { status: "found", entries: newestFirst.reverse(), nextBefore: null };
}
