import { ConfigError } from "../config/config-error.js";
import { lockByPid } from "../fs/pid-lock.js";

/**
 * `<home>/inbox.lock`: one gateway per GUPPY_HOME. Two would each replay the other's unanswered
 * prompts and compact the shared inbox journal under each other. Holds the owner's pid (see
 * fs/pid-lock.ts for when a lock is taken over). Several orchestrators of one process (tests) share
 * it. Returns the release function.
 */
export function lockInbox(path: string, home: string): () => void {
  return lockByPid(
    path,
    (owner) =>
      new ConfigError(
        `GUPPY_HOME ${home} is in use by another guppy serve (pid ${owner}): stop it, or give this one its own GUPPY_HOME (if pid ${owner} is not guppy, delete ${path}).`,
      ),
  );
}
