import { integerValue, type ParseResult, type Parser } from "../config/setting-parsers.js";
import type { SettingDefinitions, SettingValues } from "../config/settings-schema.js";
import { minuteOfDay } from "../time/local-time.js";

/**
 * GUPPY_HEARTBEAT_HOURS parsed: the local minutes a window starts at (inclusive) and ends at
 * (exclusive). `start > end` spans midnight (`22:00-06:00`).
 */
export interface ActiveHours {
  start: number;
  end: number;
}

/** What GUPPY_HEARTBEAT_HOURS accepts, for its one-line error. */
export const ACTIVE_HOURS_EXPECTED = "a local time window HH:MM-HH:MM such as 08:00-22:00";

/** `08:00-22:00` → minutes; undefined for anything else (an empty window too: start = end). */
export function parseActiveHours(raw: string): ActiveHours | undefined {
  const match = /^(\d{1,2}):(\d{2})\s*-\s*(\d{1,2}):(\d{2})$/.exec(raw.trim());
  if (!match) return undefined;
  const [h1, m1, h2, m2] = match.slice(1).map(Number) as [number, number, number, number];
  if (m1 > 59 || m2 > 59 || h1 > 23 || h2 > 24 || (h2 === 24 && m2 !== 0)) return undefined;
  const start = h1 * 60 + m1;
  const end = h2 * 60 + m2;
  return start === end ? undefined : { start, end };
}

/** Whether local minute `minute` lies in the window. */
export function withinMinutes(hours: ActiveHours, minute: number): boolean {
  return hours.start < hours.end
    ? minute >= hours.start && minute < hours.end
    : minute >= hours.start || minute < hours.end;
}

/** Whether `now`, told in `timeZone`, lies in the window (no window: always). */
export function withinActiveHours(
  hours: ActiveHours | undefined,
  now: Date,
  timeZone?: string,
): boolean {
  return hours === undefined || withinMinutes(hours, minuteOfDay(now, timeZone));
}

/** How often the heartbeat beats, and in which hours. */
export const heartbeatSettings = {
  heartbeatSeconds: {
    env: "GUPPY_HEARTBEAT_SECONDS",
    parse: integerValue(0, 7 * 86_400),
    default: 1800,
    description:
      "Seconds between heartbeats of `guppy serve`, which run `<home>/HEARTBEAT.md` in the owner's last thread when it asks for something (0: off)",
  },
  heartbeatHours: {
    env: "GUPPY_HEARTBEAT_HOURS",
    parse: activeHoursValue(),
    description:
      "Local hours heartbeats run in, HH:MM-HH:MM in GUPPY_TIMEZONE (may span midnight, e.g. 22:00-06:00); beats outside are skipped (default: all day)",
  },
} satisfies SettingDefinitions;

export type HeartbeatSettingValues = SettingValues<typeof heartbeatSettings>;

/** GUPPY_HEARTBEAT_HOURS: `HH:MM-HH:MM`, kept as written (the heartbeat parses it again). */
function activeHoursValue(): Parser<string> {
  const parse = (raw: unknown): ParseResult<string> =>
    typeof raw === "string" && parseActiveHours(raw) !== undefined
      ? { ok: true, value: raw.trim() }
      : { ok: false, expected: ACTIVE_HOURS_EXPECTED };
  return Object.assign(parse, { expected: ACTIVE_HOURS_EXPECTED });
}
