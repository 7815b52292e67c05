import { open } from "node:fs/promises";

// A log can be large (a busy channel's years): a search reads it from its end, a chunk at a time,
// and stops as soon as it has enough, so the newest lines cost the same however long the file.

const CHUNK = 256 * 1024;

/**
 * The lines of the file at `path`, last first (without their newlines; empty lines skipped). The
 * file is opened for each chunk and closed again, so a search over many threads holds no
 * descriptors between reads. A missing file has no lines.
 */
export async function* readLinesBackward(path: string, chunkSize = CHUNK): AsyncGenerator<string> {
  let position = await sizeOf(path);
  if (position === undefined) return;
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
      const line = buf.subarray(i + 1, end).toString("utf8");
      if (line.trim() !== "") yield line;
      end = i;
    }
    buf = buf.subarray(0, end);
    carry = Buffer.from(buf);
  }
  const first = carry.toString("utf8");
  if (first.trim() !== "") yield first;
}

async function sizeOf(path: string): Promise<number | undefined> {
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
    const buf = Buffer.alloc(length);
    let got = 0;
    while (got < length) {
      const { bytesRead } = await handle.read(buf, got, length - got, position + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return buf.subarray(0, got);
  } finally {
    await handle.close();
  }
}
