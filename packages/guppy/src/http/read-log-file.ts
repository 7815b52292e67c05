import { readFile } from "node:fs/promises";
import type { LogEntry } from "@guppy/core";

/**
 * A thread's log.jsonl read where the HTTP API runs (its worker thread), not on the agents'
 * thread: a year of a busy chat is ~10 MB, which took ~0.2 s of that thread to read, parse and
 * copy across. A missing file is an empty log; a torn or foreign line is left out (the store
 * warns of it when a run reads the file).
 */
export async function readLogFile(path: string): Promise<LogEntry[]> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const entries: LogEntry[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    try {
      const value = JSON.parse(line) as Partial<LogEntry> | null;
      if (
        typeof value?.date === "string" &&
        typeof value.text === "string" &&
        typeof value.isBot === "boolean"
      ) {
        entries.push(value as LogEntry);
      }
    } catch {
      // A line cut short by a crash mid-write.
    }
  }
  return entries;
}
