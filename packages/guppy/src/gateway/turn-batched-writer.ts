import { closeSync, fstatSync, mkdirSync, openSync, statSync, writeSync } from "node:fs";
import { dirname } from "node:path";

/**
 * Text written during one event-loop turn goes out in one call when the turn is over, in order.
 * Under load a turn emits hundreds of log lines: one write for all of them costs less than one
 * each (and far less than pino's default destination, which re-measures its whole buffered
 * string on every line).
 */
export interface TurnBatchedWriter {
  write(text: string): boolean;
  /** Writes what is pending now (shutdown, exit). */
  flushSync(): void;
}

export function createTurnBatchedWriter(out: (text: string) => void): TurnBatchedWriter {
  let pending: string[] = [];
  const flushSync = () => {
    if (pending.length === 0) return;
    const text = pending.length === 1 ? (pending[0] as string) : pending.join("");
    pending = [];
    out(text);
  };
  process.once("exit", flushSync);
  return {
    write(text) {
      if (pending.length === 0) setImmediate(flushSync);
      pending.push(text);
      return true;
    },
    flushSync,
  };
}

/**
 * Appends to `path` (created if missing) through a turn-batched writer, keeping the file open.
 * When the file at `path` is no longer the one open — moved away (logrotate without
 * copytruncate) or removed, its directory too — the next write, at most `checkEveryMs` (1 s)
 * after the last look, opens `path` anew: lines never keep going to a file nobody reads. A
 * failed write is reported once through `onError` and its text dropped: the gateway keeps
 * running without its file log.
 */
export function createLogFileWriter(
  path: string,
  onError: (error: unknown) => void,
  options: { checkEveryMs?: number } = {},
): TurnBatchedWriter {
  const checkEveryMs = options.checkEveryMs ?? 1000;
  let fd = openSync(path, "a");
  let checkedAt = Date.now();
  let reported = false;
  const followPath = () => {
    const now = Date.now();
    if (now - checkedAt < checkEveryMs) return;
    checkedAt = now;
    const open = fstatSync(fd);
    const atPath = statSync(path, { throwIfNoEntry: false });
    if (atPath && atPath.ino === open.ino && atPath.dev === open.dev) return;
    mkdirSync(dirname(path), { recursive: true });
    const fresh = openSync(path, "a");
    closeSync(fd);
    fd = fresh;
    reported = false;
  };
  return createTurnBatchedWriter((text) => {
    try {
      followPath();
      writeSync(fd, text, null, "utf8");
    } catch (error) {
      if (!reported) onError(error);
      reported = true;
    }
  });
}
