import { readFileSync } from "node:fs";
import type { Logger } from "../logging/logger.js";
import { appendLinesDurably } from "./durable-append.js";

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
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
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
 * Appends records as whole lines in one write (one open of the file). If the file ends in a torn
 * line (no trailing newline), a newline is written first so the torn line cannot swallow the new
 * record. Not fsync'd: the lines survive a killed process (see `appendLinesDurably` for more).
 */
export function appendJsonl(path: string, records: readonly unknown[]): void {
  appendLinesDurably(path, records, "none");
}

export function serializeJsonl(records: readonly unknown[]): string {
  return records.length === 0 ? "" : `${records.map((r) => JSON.stringify(r)).join("\n")}\n`;
}
