import { timezoneValue } from "../config/setting-parsers.js";
import type { SettingDefinitions, SettingValues } from "../config/settings-schema.js";

// The wall-clock time of a moment in a time zone (GUPPY_TIMEZONE, else the system's): the stamp
// each user message reaches the model with, and the minute of the day active hours are checked at.

/** One formatter per zone: building an Intl.DateTimeFormat costs far more than using one. */
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone,
      weekday: "short",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      hourCycle: "h23",
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/**
 * The system's zone, worked out once per value of TZ: making the Intl.DateTimeFormat that tells
 * it costs about a millisecond, and a listing of 1,000 threads asks for each thread's day.
 */
let systemZone: { tz: string | undefined; zone: string } | undefined;

/** The zone a time is told in: the configured one, else the system's. */
export function effectiveTimeZone(timeZone?: string): string {
  if (timeZone !== undefined) return timeZone;
  const tz = process.env.TZ;
  if (!systemZone || systemZone.tz !== tz) {
    systemZone = { tz, zone: Intl.DateTimeFormat().resolvedOptions().timeZone ?? "UTC" };
  }
  return systemZone.zone;
}

/** `now`'s calendar and clock fields in `timeZone`. */
export function localParts(now: Date, timeZone?: string) {
  const zone = effectiveTimeZone(timeZone);
  const parts = formatterFor(zone).formatToParts(now);
  const get = (type: Intl.DateTimeFormatPartTypes) =>
    parts.find((p) => p.type === type)?.value ?? "";
  return {
    zone,
    weekday: get("weekday"),
    date: `${get("year")}-${get("month")}-${get("day")}`,
    hour: Number(get("hour")),
    minute: Number(get("minute")),
    second: Number(get("second")),
  };
}

/**
 * `[Fri 2026-11-27 09:14 Europe/Berlin]`: put before each user message in the context as stored,
 * so relative times ("in two hours", "tomorrow") work and a later request resends the same bytes.
 */
export function timeStamp(now: Date, timeZone?: string): string {
  const p = localParts(now, timeZone);
  const hh = String(p.hour).padStart(2, "0");
  const mm = String(p.minute).padStart(2, "0");
  return `[${p.weekday} ${p.date} ${hh}:${mm} ${p.zone}]`;
}

/** Minutes since local midnight (0–1439). */
export function minuteOfDay(now: Date, timeZone?: string): number {
  const p = localParts(now, timeZone);
  return p.hour * 60 + p.minute;
}

/** The time zone dates and times are told in. */
export const timeSettings = {
  timezone: {
    env: "GUPPY_TIMEZONE",
    parse: timezoneValue,
    description: "Time zone for dates and daily notes (default: the system's)",
  },
} satisfies SettingDefinitions;

export type TimeSettingValues = SettingValues<typeof timeSettings>;
