import { join } from "node:path";
import { addDays, localDate } from "./local-date.js";
import { readTextFile } from "./read-text-file.js";

export interface DailyNote {
  /** YYYY-MM-DD in the configured time zone. */
  date: string;
  path: string;
  /** Undefined when the note is missing or blank. */
  content?: string;
}

/** `<home>/memory/YYYYMM/YYYYMMDD.md` for a YYYY-MM-DD date. */
export function dailyNotePath(home: string, date: string): string {
  const compact = date.replaceAll("-", "");
  return join(home, "memory", compact.slice(0, 6), `${compact}.md`);
}

/**
 * Today's note and the `previousDays` before it, newest first, read fresh. "Today" is the
 * calendar date of `now` in `timeZone` (the system's when unset), so a note written at 23:30 in
 * Los Angeles lands on that local day, not on the UTC one.
 */
export function readRecentDailyNotes(
  home: string,
  now: Date,
  timeZone?: string,
  previousDays = 2,
): DailyNote[] {
  const today = localDate(now, timeZone);
  const notes: DailyNote[] = [];
  for (let i = 0; i <= previousDays; i++) {
    const date = addDays(today, -i);
    const path = dailyNotePath(home, date);
    const content = readTextFile(path);
    notes.push({ date, path, ...(content ? { content } : {}) });
  }
  return notes;
}
