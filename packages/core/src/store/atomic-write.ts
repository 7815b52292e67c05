import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, openSync, renameSync, rmSync } from "node:fs";
import { fileWriteError } from "./file-write-error.js";
import { writeFully } from "./write-fully.js";

/**
 * Writes a whole file through a temp file in the same directory and a rename: readers see the old
 * or the new content, never half. When any step fails (a disk too full for the new content) the
 * temp file is removed and the file at `path` is left as it was; the error names `path`.
 */
export function writeFileAtomic(path: string, content: string): void {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    const fd = openSync(tmp, "w");
    try {
      writeFully(fd, content);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (error) {
    try {
      rmSync(tmp, { force: true });
    } catch {
      // The write's error says more.
    }
    throw fileWriteError("Could not write", path, error);
  }
}
