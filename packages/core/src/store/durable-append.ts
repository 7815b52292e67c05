import {
  close,
  closeSync,
  fstatSync,
  fsync,
  fsyncSync,
  openSync,
  readSync,
  writeSync,
} from "node:fs";
import { dirname } from "node:path";

/**
 * How an append reaches the disk: `none` (page cache only: survives a killed process, not a
 * power cut), `now` (fsync before returning), `deferred` (fsync in libuv's thread pool; the
 * returned promise resolves once the line is on disk — the event loop never blocks on it).
 */
export type SyncMode = "none" | "now" | "deferred";

/**
 * Appends whole JSON lines and syncs them as `mode` says (with the directory too when the file
 * was just created). A torn last line (a crash mid-write) gets a newline first so it cannot
 * swallow the new record.
 */
export function appendLinesDurably(
  path: string,
  records: readonly unknown[],
  mode: SyncMode,
): Promise<void> | undefined {
  if (records.length === 0) return undefined;
  const body = `${records.map((r) => JSON.stringify(r)).join("\n")}\n`;
  const fd = openSync(path, "a+");
  let created = false;
  try {
    let prefix = "";
    if (!whole.has(path)) {
      // First append to this file in this process: check how the last writer left it.
      const size = fstatSync(fd).size;
      created = size === 0;
      if (size > 0) {
        const last = Buffer.alloc(1);
        readSync(fd, last, 0, 1, size - 1);
        if (last[0] !== 0x0a) prefix = "\n";
      }
    }
    writeSync(fd, prefix + body, null, "utf8");
    rememberWhole(path);
    if (mode === "now") fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  if (mode !== "deferred") {
    closeSync(fd);
    if (mode === "now" && created) syncDirectory(dirname(path));
    return undefined;
  }
  return new Promise<void>((resolve, reject) => {
    fsync(fd, (error) => {
      close(fd, () => {});
      if (error) reject(error);
      else if (created) syncDirectoryAsync(dirname(path)).then(resolve, resolve);
      else resolve();
    });
  });
}

/**
 * Files this process appended whole lines to: their last line is known to be whole, so the next
 * append skips the fstat and one-byte read (the check matters only after another writer died
 * mid-line, which a process sees on its first append). Bounded; forgetting only costs a check.
 */
const whole = new Set<string>();
const MAX_WHOLE = 8192;

function rememberWhole(path: string): void {
  if (whole.has(path)) return;
  if (whole.size >= MAX_WHOLE) whole.clear();
  whole.add(path);
}

/**
 * Forget what `appendLinesDurably` knows of a file that is about to be replaced, truncated or
 * removed by other means.
 */
export function forgetAppendState(path: string): void {
  whole.delete(path);
}

function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch {
    // Some filesystems refuse fsync on a directory; the file itself is synced.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function syncDirectoryAsync(dir: string): Promise<void> {
  return new Promise((resolve) => {
    let fd: number;
    try {
      fd = openSync(dir, "r");
    } catch {
      resolve();
      return;
    }
    fsync(fd, () => close(fd, () => resolve()));
  });
}
