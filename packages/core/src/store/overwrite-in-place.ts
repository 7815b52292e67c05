import { closeSync, constants, ftruncateSync, openSync } from "node:fs";
import { fileWriteError } from "./file-write-error.js";
import { writeFully } from "./write-fully.js";

/** Open for writing, created if missing, never truncated on open. */
const OPEN_FLAGS = constants.O_WRONLY | constants.O_CREAT;

/**
 * Replaces the content of `path` (created if missing) by writing over it and cutting what is
 * left of a longer old content: no truncate to zero, no rename, no fsync. For small advisory
 * files rewritten often (a thread's log cursor and status): on ext4 a truncate-and-rewrite or a
 * rename over the file flushes it at close (auto_da_alloc), which costs milliseconds each time.
 * Not atomic: a reader in another process, or after a power cut, may see a mix, and the readers
 * of such files take what does not parse as missing. A write the disk takes only part of is
 * continued, and fails (naming the file) when it cannot be: never cut to a shorter content that
 * may still parse (a log cursor's offset short of some digits).
 */
export function overwriteInPlace(path: string, text: string): void {
  const fd = openSync(path, OPEN_FLAGS, 0o666);
  try {
    ftruncateSync(fd, writeFully(fd, text, 0));
  } catch (error) {
    throw fileWriteError("Could not write", path, error);
  } finally {
    closeSync(fd);
  }
}
