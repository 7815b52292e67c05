import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Store } from "@guppy/core";
import { lockByPid, lockHolder } from "@guppy/core/fs";
import { CHAT_LOCK_FILE } from "@guppy/core/thread-layout";
import { UsageError } from "../cli/cli-error.js";

/**
 * One `guppy chat` per session: two would each send the model their own diverging history and
 * save over each other's turns (a /compact rewrites context.jsonl from one process's memory).
 * A second chat on the session refuses with one line; a lock left by a process that is gone is
 * taken over. Returns the release function (also run at exit).
 */
export function lockChatSession(
  store: Pick<Store, "threadDir">,
  threadId: string,
  session: string,
): () => void {
  const dir = store.threadDir(threadId);
  mkdirSync(dir, { recursive: true });
  return lockByPid(join(dir, CHAT_LOCK_FILE), (owner) => sessionOpenError(session, owner));
}

/** What a second `guppy chat` on a session is told. */
export function sessionOpenError(session: string, owner: number): UsageError {
  return new UsageError(
    `session "${session}" is open in another guppy chat (pid ${owner}); use --session NAME for another conversation`,
  );
}

/**
 * The pid of the live `guppy chat` that has a terminal thread (`cli:…`) open, if any: a gateway
 * leaves that thread to it (see serve-command.ts).
 */
export function chatSessionHolder(
  store: Pick<Store, "threadDir">,
  threadId: string,
): number | undefined {
  if (!threadId.startsWith("cli:")) return undefined;
  try {
    return lockHolder(join(store.threadDir(threadId), CHAT_LOCK_FILE));
  } catch {
    return undefined;
  }
}

/** The gateway's refusal of a thread a chat holds (the HTTP API answers it with 409). */
export function heldByChat(store: Store, threadId: string): string | undefined {
  const pid = chatSessionHolder(store, threadId);
  return pid === undefined
    ? undefined
    : `${threadId} is open in guppy chat (pid ${pid}), which runs it until it exits`;
}
