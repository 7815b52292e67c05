import { fstatSync, ftruncateSync, writeSync } from "node:fs";

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
