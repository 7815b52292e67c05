import { openSync, writeSync } from "node:fs";

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
 * Appends to `path` (created if missing) through a turn-batched writer; the file stays open for
 * the process's life. A failed write is reported once through `onError` and its text dropped:
 * the gateway keeps running without its file log.
 */
export function createLogFileWriter(
  path: string,
  onError: (error: unknown) => void,
): TurnBatchedWriter {
  const fd = openSync(path, "a");
  let reported = false;
  return createTurnBatchedWriter((text) => {
    try {
      writeSync(fd, text, null, "utf8");
    } catch (error) {
      if (!reported) onError(error);
      reported = true;
    }
  });
}
