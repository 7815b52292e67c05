import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { lockByPid, type Store } from "@guppy/core";
import { CHAT_LOCK_FILE } from "@guppy/core/thread-layout";
import { UsageError } from "../cli/cli-error.js";

/**
 * One `guppy chat` per session: two would each send the model their own diverging history and
 * save over each other's turns (a /compact rewrites context.jsonl from one process's memory).
 * A second chat on the session refuses with one line; a lock left by a process that is gone is
 * taken over. Returns the release function (also run at exit).
 */
export function lockChatSession(store: Store, threadId: string, session: string): () => void {
  const dir = store.threadDir(threadId);
  mkdirSync(dir, { recursive: true });
  return lockByPid(
    join(dir, CHAT_LOCK_FILE),
    (owner) =>
      new UsageError(
        `session "${session}" is open in another guppy chat (pid ${owner}); use --session NAME for another conversation`,
      ),
  );
}
