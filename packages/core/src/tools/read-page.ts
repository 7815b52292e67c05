import { read } from "node:fs";
import { promisify } from "node:util";

const readAt = promisify(read);

/** How `readPage` reads: tests lower these to reach chunk borders and the counting limit. */
export interface PageLimits {
  /** Bytes read at a time. */
  chunkBytes: number;
  /**
   * After the page, lines are counted to the end of the file only while no more than this many
   * of its bytes have been read; past it the total is left unknown.
   */
  countBytes: number;
}

export const defaultPageLimits: PageLimits = {
  chunkBytes: 256 * 1024,
  countBytes: 64 * 1024 * 1024,
};

export interface PageRequest {
  /** First line wanted, 0-based. */
  start: number;
  /** Most lines wanted. */
  limit: number;
  /** The output cap: lines stop once their text (plus two characters each) passes it. */
  maxChars: number;
  /** Longer lines are cut to this many characters, with a note. */
  maxLineChars: number;
}

export interface Page {
  /** Lines from `start` on, cut to `maxLineChars`: at least as many as the limit and the cap let show. */
  lines: string[];
  /** Lines in the file, as `text.split("\n")` counts them without a last empty one; undefined when not counted to the end. */
  total: number | undefined;
  /** Lines known to exist: the total, or (not counted to the end) a lower bound of it. */
  known: number;
}

/**
 * One page of a text file's lines, read in chunks rather than whole: the lines before `start`
 * are only counted, the page's lines are decoded (at most the bytes `maxLineChars` can need),
 * and after the page the rest is only counted — up to `countBytes` of the file. Lines are what
 * decoding the whole file as UTF-8 and splitting it at "\n" gives: a newline byte is never part
 * of a multi-byte sequence, so each line decodes the same on its own.
 */
export async function readPage(
  fd: number,
  request: PageRequest,
  limits: PageLimits = defaultPageLimits,
): Promise<Page> {
  const { start, limit, maxChars, maxLineChars } = request;
  // A UTF-16 unit takes at most 3 bytes (an invalid sequence too), so this holds more than
  // maxLineChars + 1 units, and only the last few could decode otherwise with the line whole.
  const keepBytes = 4 * (maxLineChars + 1);
  const chunk = Buffer.allocUnsafe(limits.chunkBytes);
  const lines: string[] = [];
  let chars = 0;
  let collecting = limit > 0;
  let line = 0; // index of the line being read
  let lineBytes = 0; // its bytes so far
  let kept: Buffer[] = []; // the first keepBytes of them, for a line of the page
  let keptBytes = 0;
  const endLine = () => {
    if (collecting && line >= start) {
      const text = Buffer.concat(kept, keptBytes).toString("utf8");
      const shown =
        lineBytes > keptBytes || text.length > maxLineChars
          ? `${text.slice(0, maxLineChars)} [line cut at ${maxLineChars} chars]`
          : text;
      lines.push(shown);
      chars += shown.length + 2;
      if (lines.length >= limit || chars > maxChars) collecting = false;
    }
    kept = [];
    keptBytes = 0;
    lineBytes = 0;
    line++;
  };
  let position = 0;
  for (;;) {
    const { bytesRead } = await readAt(fd, chunk, 0, chunk.length, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    const bytes = chunk.subarray(0, bytesRead);
    let at = 0;
    while (at < bytesRead) {
      const newline = bytes.indexOf(10, at);
      const end = newline === -1 ? bytesRead : newline;
      if (collecting && line >= start && keptBytes < keepBytes) {
        // A copy: the chunk is read into again.
        const piece = Buffer.from(bytes.subarray(at, Math.min(end, at + keepBytes - keptBytes)));
        kept.push(piece);
        keptBytes += piece.length;
      }
      lineBytes += end - at;
      if (newline === -1) break;
      endLine();
      at = newline + 1;
    }
    const seen = line + (lineBytes > 0 ? 1 : 0);
    // Stop counting only with a line past the page seen, so "continue at" names a real one.
    if (!collecting && position > limits.countBytes && seen > start + lines.length) {
      return { lines, total: undefined, known: seen };
    }
  }
  // A last line without a newline is a line; so is the empty file's only (empty) line.
  if (lineBytes > 0 || line === 0) endLine();
  return { lines, total: line, known: line };
}
