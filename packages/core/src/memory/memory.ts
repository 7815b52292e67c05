import { join } from "node:path";
import { adapterDirOf, channelDirOf, parseThreadId } from "../store/thread-layout.js";
import { type Refused, readTextFile } from "./read-text-file.js";

export interface MemoryLevel {
  scope: Scope;
  /** Heading used in the system prompt, e.g. "Transport Memory (telegram)". */
  title: string;
  /** What the level is for, told to the agent so it picks the narrowest that fits. */
  purpose: string;
  /** Host path of the level's MEMORY.md (it may not exist yet). */
  path: string;
  /** The file's text; undefined when missing or blank. */
  content?: string;
}

/**
 * The thread's three memory files (global, transport, channel), read fresh from disk on every
 * call: the runner calls this before each run, so what the agent wrote last time is seen next time.
 */
export function readMemoryLevels(home: string, threadId: string, refused?: Refused): MemoryLevel[] {
  return scopeDirs(home, threadId).map(({ scope, dir, label }) => {
    const path = join(dir, "MEMORY.md");
    const content = readTextFile(path, home, refused);
    const detail = label.includes("(") ? label.slice(label.indexOf("(")) : "";
    const title = `${scope[0]?.toUpperCase()}${scope.slice(1)} Memory${detail ? ` ${detail}` : ""}`;
    return { scope, title, purpose: purposes[scope], path, ...(content ? { content } : {}) };
  });
}

const purposes: Record<Scope, string> = {
  global: "facts and preferences that hold everywhere",
  transport: "conventions and knowledge for every chat on this platform",
  channel: "context of this channel only: its people, projects, ongoing work",
};

/** The three levels memory and skills live at, broadest first. */
export const scopes = ["global", "transport", "channel"] as const;
export type Scope = (typeof scopes)[number];

export interface ScopeDir {
  scope: Scope;
  /** Host directory of the level: `<home>`, `<home>/<adapter>`, `<home>/<adapter>/<channel>`. */
  dir: string;
  /** How the prompt and `guppy skills` name the level, e.g. `transport (telegram)`. */
  label: string;
}

/** The global, transport and channel directories a thread sees (the store's layout). */
export function scopeDirs(home: string, threadId: string): ScopeDir[] {
  const ref = parseThreadId(threadId);
  return [
    { scope: "global", dir: home, label: "global" },
    {
      scope: "transport",
      dir: adapterDirOf(home, threadId),
      label: `transport (${ref.adapter})`,
    },
    {
      scope: "channel",
      dir: channelDirOf(home, threadId),
      label: `channel (${ref.adapter}:${ref.channel})`,
    },
  ];
}

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
  refused?: Refused,
): DailyNote[] {
  const today = localDate(now, timeZone);
  const notes: DailyNote[] = [];
  for (let i = 0; i <= previousDays; i++) {
    const date = addDays(today, -i);
    const path = dailyNotePath(home, date);
    const content = readTextFile(path, home, refused);
    notes.push({ date, path, ...(content ? { content } : {}) });
  }
  return notes;
}

/** Building an Intl formatter costs ~0.5 ms; one per time zone is kept. */
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string | undefined): Intl.DateTimeFormat {
  const key = timeZone ?? "";
  let formatter = formatters.get(key);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat("en-CA", {
      timeZone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
    });
    formatters.set(key, formatter);
  }
  return formatter;
}

/** The last date worked out per time zone and the minute it holds for (zones shift by whole minutes). */
const lastDates = new Map<string, { minute: number; date: string }>();

/** YYYY-MM-DD of `now` in `timeZone` (the system's when unset). */
export function localDate(now: Date, timeZone?: string): string {
  const key = timeZone ?? "";
  const minute = Math.floor(now.getTime() / 60_000);
  const hit = lastDates.get(key);
  if (hit?.minute === minute) return hit.date;
  const parts = formatterFor(timeZone).formatToParts(now);
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? "";
  const date = `${get("year")}-${get("month")}-${get("day")}`;
  lastDates.set(key, { minute, date });
  return date;
}

/** The calendar date `days` after (or before, when negative) a YYYY-MM-DD date. */
export function addDays(date: string, days: number): string {
  const [y, m, d] = date.split("-").map(Number);
  const shifted = new Date(Date.UTC(y ?? 1970, (m ?? 1) - 1, (d ?? 1) + days));
  return shifted.toISOString().slice(0, 10);
}
