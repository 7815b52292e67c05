import {
  appendFileSync,
  closeSync,
  existsSync,
  openSync,
  readFileSync,
  readSync,
  statSync,
} from "node:fs";
import type { Logger } from "../logging/logger.js";

/**
 * Reads a JSON-lines file. A torn or invalid line (a crash mid-write) is skipped with one warning
 * naming the file and line; it is never fatal. A missing file reads as empty.
 */
export function readJsonl<T>(
  path: string,
  logger: Logger,
  validate?: (value: unknown) => value is T,
): T[] {
  if (!existsSync(path)) return [];
  const text = readFileSync(path, "utf8");
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
      logger.warn(`Skipped an unreadable line ${i + 1} of ${path} (torn write?)`);
    }
  }
  return out;
}

/**
 * Appends records as whole lines in one write. If the file ends in a torn line (no trailing
 * newline), a newline is written first so the torn line cannot swallow the new record.
 */
export function appendJsonl(path: string, records: readonly unknown[]): void {
  if (records.length === 0) return;
  const body = `${records.map((r) => JSON.stringify(r)).join("\n")}\n`;
  const prefix = endsWithoutNewline(path) ? "\n" : "";
  appendFileSync(path, prefix + body, "utf8");
}

function endsWithoutNewline(path: string): boolean {
  let size: number;
  try {
    size = statSync(path).size;
  } catch {
    return false;
  }
  if (size === 0) return false;
  const fd = openSync(path, "r");
  try {
    const buf = Buffer.alloc(1);
    readSync(fd, buf, 0, 1, size - 1);
    return buf[0] !== 0x0a;
  } finally {
    closeSync(fd);
  }
}

export function serializeJsonl(records: readonly unknown[]): string {
  return records.length === 0 ? "" : `${records.map((r) => JSON.stringify(r)).join("\n")}\n`;
}
