import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";

// Writing files whole: short writes continued, failures named by file, atomic and in-place rewrites.

/**
 * One write(2) of `data` at `position` (null: at the file's offset, or its end when opened for
 * append): the bytes it took, which may be fewer than asked on a nearly full disk.
 */
export type WriteSync = (fd: number, data: string | Uint8Array, position: number | null) => number;

const nodeWriteSync: WriteSync = (fd, data, position) =>
  typeof data === "string"
    ? writeSync(fd, data, position, "utf8")
    : writeSync(fd, data, 0, data.byteLength, position);

let write: WriteSync = nodeWriteSync;

/**
 * Tests: the write the store's files go through (a disk that fills up part way through a write,
 * without a full disk of its own). Returns the one it replaces.
 */
export function setWriteSync(next: WriteSync): WriteSync {
  const old = write;
  write = next;
  return old;
}

/** A failed write and how many of its bytes reached the file before it failed. */
type PartialWriteError = Error & { written?: number };

/**
 * Writes all of `data` (a string as UTF-8) at `position` (null: the file's offset, or its end
 * when opened for append) and returns its length in bytes. A write that takes only part (a
 * nearly full disk) is continued with the rest, so a full disk shows as the error it is (ENOSPC)
 * instead of a shorter file; the thrown error's `written` says how many bytes got out first.
 * One write(2) when all goes well.
 */
export function writeFully(
  fd: number,
  data: string | Uint8Array,
  position: number | null = null,
): number {
  const first = write(fd, data, position);
  const total = typeof data === "string" ? Buffer.byteLength(data, "utf8") : data.byteLength;
  if (first === total) return total;
  const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  let done = first;
  try {
    while (done < total) {
      const n = write(fd, bytes.subarray(done), position === null ? null : position + done);
      if (n <= 0) throw new Error(`the write stopped after ${done} of ${total} bytes`);
      done += n;
    }
  } catch (error) {
    (error as PartialWriteError).written = done;
    throw error;
  }
  return total;
}

/**
 * Appends all of `text` to a file opened for append (see `writeFully`). When that fails, what
 * did get out is cut off again, so the file ends where it did — no half line for the next append
 * to be glued to, and a caller that tries again does not repeat whole lines that went through.
 * Throws the write's error; `cutBack` false when the cut failed too (the file may now end
 * mid-line). Costs nothing extra when the write succeeds.
 */
export function appendFully(fd: number, text: string): number {
  try {
    return writeFully(fd, text);
  } catch (error) {
    const written = (error as PartialWriteError).written ?? 0;
    let cutBack = true;
    if (written > 0) {
      try {
        ftruncateSync(fd, fstatSync(fd).size - written);
      } catch {
        cutBack = false;
      }
    }
    (error as Error & { cutBack?: boolean }).cutBack = cutBack;
    throw error;
  }
}

/** Whether a failed `appendFully` left the file as it was before it. */
export function appendWasUndone(error: unknown): boolean {
  return (error as { cutBack?: unknown } | null)?.cutBack === true;
}

/**
 * A failed write as one line that names the file: `<doing> <path>: no space left on device
 * (ENOSPC)` rather than node's `ENOSPC: no space left on device, write`, which does not say
 * which file. Keeps the error's `code`; the original is its `cause`.
 */
export function fileWriteError(doing: string, path: string, error: unknown): Error {
  const e = error as NodeJS.ErrnoException | undefined;
  let reason = e instanceof Error ? e.message : String(error);
  const code = typeof e?.code === "string" ? e.code : undefined;
  if (code !== undefined && reason.startsWith(`${code}: `)) {
    // "ENOSPC: no space left on device, write" → "no space left on device (ENOSPC)"
    reason = `${reason.slice(code.length + 2).replace(/, [a-z]+( '.*)?$/, "")} (${code})`;
  }
  const out: NodeJS.ErrnoException = new Error(
    `${doing} ${path}: ${reason.replace(/\s*\n\s*/g, " ")}`,
    { cause: error },
  );
  if (code !== undefined) out.code = code;
  return out;
}

/**
 * Writes a whole file through a temp file in the same directory and a rename: readers see the old
 * or the new content, never half. When any step fails (a disk too full for the new content) the
 * temp file is removed and the file at `path` is left as it was; the error names `path`. `mode`:
 * the new file's permissions (0o600 for one only its owner may read).
 */
export function writeFileAtomic(path: string, content: string, mode?: number): void {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    const fd = openSync(tmp, "w", mode);
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

/** Open for writing, created if missing, never truncated on open. */
const OPEN_FLAGS = constants.O_WRONLY | constants.O_CREAT;

/**
 * Replaces the content of `path` (created if missing) by writing over it and cutting off the
 * rest: no truncate to zero, no rename, no fsync, so no flush at close, for small files rewritten
 * often (log cursor, status). Not atomic: readers take what does not parse as missing. A short
 * write is continued or fails naming the file, never leaving a shorter content that may parse.
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
