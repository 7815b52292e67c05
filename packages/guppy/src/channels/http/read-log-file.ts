import { readFile } from "node:fs/promises";
import { isLogEntry, type LogEntry } from "@guppy/core/thread-layout";

/**
 * A thread's log.jsonl read in the HTTP worker, not on the agents' thread. A missing file is an
 * empty log; a torn or foreign line is left out (the store warns of it when a run reads the file).
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
      const value: unknown = JSON.parse(line);
      if (isLogEntry(value)) entries.push(value);
    } catch {
      // A line cut short by a crash mid-write.
    }
  }
  return entries;
}
