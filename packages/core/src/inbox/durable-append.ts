import { closeSync, fstatSync, fsyncSync, openSync, readSync, writeSync } from "node:fs";
import { dirname } from "node:path";

/**
 * Appends whole JSON lines and, when `sync`, fsyncs the file (and its directory when the file
 * was just created) before returning: once this returns the lines survive a crash or power cut.
 * A torn last line (a crash mid-write) gets a newline first so it cannot swallow the new record.
 */
export function appendLinesDurably(path: string, records: readonly unknown[], sync: boolean): void {
  if (records.length === 0) return;
  const body = `${records.map((r) => JSON.stringify(r)).join("\n")}\n`;
  const fd = openSync(path, "a+");
  let created = false;
  try {
    const size = fstatSync(fd).size;
    created = size === 0;
    let prefix = "";
    if (size > 0) {
      const last = Buffer.alloc(1);
      readSync(fd, last, 0, 1, size - 1);
      if (last[0] !== 0x0a) prefix = "\n";
    }
    writeSync(fd, prefix + body, null, "utf8");
    if (sync) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  if (sync && created) syncDirectory(dirname(path));
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
