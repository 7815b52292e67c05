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
