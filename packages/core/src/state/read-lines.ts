import { open } from "node:fs/promises";

// A log can be large (a busy channel's years): it is read a chunk at a time, from its end or from
// a place in it, and a reader stops as soon as it has enough, so a page costs its lines, not the
// file's. The file is opened for each chunk and closed again: a search over many threads holds
// no descriptors between reads.

const CHUNK = 256 * 1024;

/** One line of a file (without its newline) and the byte offset it starts at. */
export interface FileLine {
  text: string;
  start: number;
}

/**
 * The lines of the file at `path` that end before byte `before` (the file's end when absent),
 * last first; empty lines skipped. A missing file has no lines.
 */
export async function* readLinesBackward(
  path: string,
  options: { before?: number; chunkSize?: number } = {},
): AsyncGenerator<FileLine> {
  const chunkSize = options.chunkSize ?? CHUNK;
  const size = await sizeOf(path);
  if (size === undefined) return;
  let position = Math.min(options.before ?? size, size);
  /** The start of a line whose beginning is in a chunk not read yet. */
  let carry: Buffer = Buffer.alloc(0);
  while (position > 0) {
    const length = Math.min(chunkSize, position);
    position -= length;
    const chunk = await readAt(path, position, length);
    if (chunk === undefined) return;
    let buf = carry.length > 0 ? Buffer.concat([chunk, carry]) : chunk;
    let end = buf.length;
    for (let i = buf.length - 1; i >= 0; i--) {
      if (buf[i] !== 0x0a) continue;
      const text = buf.subarray(i + 1, end).toString("utf8");
      if (text.trim() !== "") yield { text, start: position + i + 1 };
      end = i;
    }
    buf = buf.subarray(0, end);
    carry = Buffer.from(buf);
  }
  const first = carry.toString("utf8");
  if (first.trim() !== "") yield { text: first, start: 0 };
}

/**
 * The whole lines of the file at `path` from byte `from` on, first first; empty lines skipped. A
 * last line with no newline yet (being written, or torn by a crash) is left out: the next read
 * from where this one stopped gets it once it is whole. `end` of a line is the offset after its
 * newline. A missing file has no lines.
 */
export async function* readLinesForward(
  path: string,
  from: number,
  chunkSize = CHUNK,
): AsyncGenerator<FileLine & { end: number }> {
  let position = from;
  let carry: Buffer = Buffer.alloc(0);
  for (;;) {
    const chunk = await readAt(path, position, chunkSize);
    if (chunk === undefined || chunk.length === 0) return;
    const buf = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
    const bufStart = position - carry.length;
    position += chunk.length;
    let start = 0;
    for (let nl = buf.indexOf(0x0a); nl !== -1; nl = buf.indexOf(0x0a, start)) {
      const text = buf.subarray(start, nl).toString("utf8");
      if (text.trim() !== "") yield { text, start: bufStart + start, end: bufStart + nl + 1 };
      start = nl + 1;
    }
    carry = Buffer.from(buf.subarray(start));
    if (chunk.length < chunkSize) return;
  }
}

/** The file's size; undefined when there is no file. */
export async function sizeOf(path: string): Promise<number | undefined> {
  try {
    const handle = await open(path, "r");
    try {
      return (await handle.stat()).size;
    } finally {
      await handle.close();
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** `length` bytes of the file from `position` (fewer if it was cut short meanwhile). */
async function readAt(path: string, position: number, length: number): Promise<Buffer | undefined> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  try {
    // Never more than the file holds: a read at a log's end (nothing new) allocates nothing.
    const want = Math.max(0, Math.min(length, (await handle.stat()).size - position));
    const buf = Buffer.alloc(want);
    let got = 0;
    while (got < want) {
      const { bytesRead } = await handle.read(buf, got, want - got, position + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return buf.subarray(0, got);
  } finally {
    await handle.close();
  }
}
