import { closeSync, openSync, readSync } from "node:fs";

/** How much of a file's start is looked at to tell binary from text. */
const SNIFF_BYTES = 8192;

/** True for bytes that look binary: a NUL among the first 8 KiB. read and edit refuse these. */
export function looksBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, SNIFF_BYTES).includes(0);
}

/** looksBinary for a regular file, reading only its first 8 KiB. */
export function fileLooksBinary(path: string): boolean {
  const fd = openSync(path, "r");
  try {
    const head = Buffer.alloc(SNIFF_BYTES);
    return looksBinary(head.subarray(0, readSync(fd, head, 0, head.length, 0)));
  } finally {
    closeSync(fd);
  }
}

/**
 * The bytes as UTF-8 text, or the offset of the first byte that is not valid UTF-8: decoding
 * turns such bytes into U+FFFD, so writing the text back would change them, not only the part
 * that was meant to change. Valid means decoding then encoding gives the same bytes.
 */
export function decodeUtf8(bytes: Buffer): { text: string } | { invalidAt: number } {
  const text = bytes.toString("utf8");
  const again = Buffer.from(text, "utf8");
  if (again.equals(bytes)) return { text };
  // Up to the first invalid sequence both are the same bytes.
  let at = 0;
  while (at < bytes.length && bytes[at] === again[at]) at++;
  return { invalidAt: at };
}
