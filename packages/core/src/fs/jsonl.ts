import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync } from "node:fs";
import type { Logger } from "../logging/logger.js";
import { forgetAppendState, openAppendFd } from "./durable-append.js";

/**
 * Reads a JSON-lines file. A torn or invalid line (a crash mid-write) is skipped with one warning
 * naming the file and line; it is never fatal. A missing file reads as empty.
 */
export function readJsonl<T>(
  path: string,
  logger: Logger,
  validate?: (value: unknown) => value is T,
): T[] {
  let text: string;
  // The file this process appends to is often open already (a new thread's files are opened
  // before its first run): read through that descriptor, or not at all when it is empty.
  const shared = openAppendFd(path);
  if (shared !== undefined) {
    if (shared.size === 0) return [];
    text = readBytes(shared.fd, 0, shared.size).toString("utf8");
  } else {
    try {
      // A missing file is common (a new thread): asked first, as a thrown ENOENT costs more.
      if (!existsSync(path)) return [];
      text = readFileSync(path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
  }
  // A torn last line: the next append must check the file's end again.
  if (text.length > 0 && !text.endsWith("\n")) forgetAppendState(path);
  return parseLines(text, validate, (i) =>
    logger.warn(`Skipped an unreadable line ${i + 1} of ${path} (torn write?)`),
  );
}

function parseLines<T>(
  text: string,
  validate: ((value: unknown) => value is T) | undefined,
  skipped: (lineIndex: number) => void,
): T[] {
  const out: T[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line === undefined || line.trim() === "") continue;
    try {
      const value: unknown = JSON.parse(line);
      if (validate && !validate(value)) throw new Error("unexpected shape");
      out.push(value as T);
    } catch {
      skipped(i);
    }
  }
  return out;
}

/** What `readJsonlFrom` read: the records and the byte offset to read from next time. */
export type JsonlTail<T> =
  | { records: T[]; end: number }
  /** The file is shorter than the offset: it was replaced or truncated; read it from 0. */
  | { restart: true };

/**
 * Reads the whole lines a JSON-lines file gained after byte `offset` (a file that only grows by
 * appends): a line still being written (no newline yet) is left for the next read. A missing
 * file reads as empty at offset 0.
 */
export function readJsonlFrom<T>(
  path: string,
  offset: number,
  logger: Logger,
  validate?: (value: unknown) => value is T,
): JsonlTail<T> {
  const missing = (): JsonlTail<T> => (offset === 0 ? { records: [], end: 0 } : { restart: true });
  return readOpen(path, missing, (fd, size): JsonlTail<T> => {
    if (size < offset) return { restart: true };
    if (size === offset) return { records: [], end: offset };
    const buf = readBytes(fd, offset, size - offset);
    const got = buf.length;
    const whole = buf.lastIndexOf(0x0a, got - 1) + 1;
    if (whole < got) forgetAppendState(path);
    if (whole === 0) return { records: [], end: offset };
    const text = buf.subarray(0, whole).toString("utf8");
    const records = parseLines(text, validate, (i) =>
      logger.warn(
        `Skipped an unreadable line ${i + 1} after byte ${offset} of ${path} (torn write?)`,
      ),
    );
    return { records, end: offset + whole };
  });
}

/**
 * The records on the whole lines among the `window` bytes before byte `offset` of a JSON-lines
 * file — if `offset` is still the end of a line there (else undefined: the file was replaced or
 * cut short). For resuming at a known place without reading what precedes it; the window may
 * start mid-line, so a line that does not parse is left out quietly.
 */
export function readJsonlBefore<T>(
  path: string,
  offset: number,
  window: number,
  validate?: (value: unknown) => value is T,
): T[] | undefined {
  return readOpen(
    path,
    () => undefined,
    (fd, size) => {
      if (offset <= 0 || size < offset) return undefined;
      const start = Math.max(0, offset - window);
      const buf = readBytes(fd, start, offset - start);
      if (buf.length !== offset - start || buf[buf.length - 1] !== 0x0a) return undefined;
      const first = start === 0 ? 0 : buf.indexOf(0x0a) + 1;
      return parseLines(buf.subarray(first).toString("utf8"), validate, () => {});
    },
  );
}

/**
 * `read` with a descriptor of `path` and the file's size: the descriptor this process keeps open
 * for appending to it when there is one (usually: read through it), else one of its own, closed
 * after. `missing` answers for a file that does not exist.
 */
function readOpen<R>(path: string, missing: () => R, read: (fd: number, size: number) => R): R {
  const shared = openAppendFd(path);
  let fd: number;
  if (shared !== undefined) fd = shared.fd;
  else {
    try {
      fd = openSync(path, "r");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      return missing();
    }
  }
  try {
    return read(fd, shared !== undefined ? shared.size : fstatSync(fd).size);
  } finally {
    if (shared === undefined) closeSync(fd);
  }
}

/** Up to `length` bytes of `fd` from `offset` (fewer if the file ends sooner). */
function readBytes(fd: number, offset: number, length: number): Buffer {
  const buf = Buffer.alloc(length);
  let got = 0;
  while (got < length) {
    const n = readSync(fd, buf, got, length - got, offset + got);
    if (n === 0) break;
    got += n;
  }
  return got < length ? buf.subarray(0, got) : buf;
}
