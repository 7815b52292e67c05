// Numbers and times as the pages show them (the browser's locale and zone).

/** `123.4 MB` (10^6 bytes, as `guppy status` prints it). */
export function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

/** `3 d 4 h`, `2 h 5 min`, `12 min`, `40 s` (as `guppy status`). */
export function duration(seconds: number): string {
  const d = Math.floor(seconds / 86_400);
  const h = Math.floor((seconds % 86_400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  if (d > 0) return `${d} d ${h} h`;
  if (h > 0) return `${h} h ${m} min`;
  if (m > 0) return `${m} min`;
  return `${Math.floor(seconds)} s`;
}

/**
 * One `Intl.DateTimeFormat` per set of options, made at first use: `toLocaleString(…, options)`
 * builds a new one at every call, which cost ~1 ms a message when a thread opened.
 */
function dateFormat(options: Intl.DateTimeFormatOptions): (date: Date) => string {
  let format: Intl.DateTimeFormat | undefined;
  return (date) => {
    format ??= new Intl.DateTimeFormat(undefined, options);
    return format.format(date);
  };
}

const mediumDateTime = dateFormat({ dateStyle: "medium", timeStyle: "medium" });
/** `14:05` (the browser's locale decides the form). */
export const clockTime = dateFormat({ hour: "2-digit", minute: "2-digit" });
/** `Nov 27, 2026, 14:05`. */
export const shortDateTime = dateFormat({
  year: "numeric",
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
});

/** An ISO time in local time, to the second; the text as given when it is not a time. */
export function localTime(iso: string): string {
  const t = new Date(iso);
  return Number.isNaN(t.getTime()) ? iso : mediumDateTime(t);
}

/** "now", "5 min", "3 h", "2 d", then the date: how long ago `iso` was. */
export function timeAgo(iso: string | null, now = Date.now()): string {
  if (!iso) return "never";
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return iso;
  const s = Math.max(0, Math.round((now - then) / 1000));
  if (s < 45) return "now";
  if (s < 3600) return `${Math.round(s / 60)} min`;
  if (s < 86_400) return `${Math.round(s / 3600)} h`;
  if (s < 30 * 86_400) return `${Math.round(s / 86_400)} d`;
  return new Date(then).toLocaleDateString();
}

/** How far off `iso` is from `now`: "in 5 s", "in 3 min", "in 2 h", "in 4 days", "due". */
export function timeUntil(iso: string, now: number): string {
  const seconds = Math.round((Date.parse(iso) - now) / 1000);
  if (seconds <= 0) return "due";
  if (seconds < 90) return `in ${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 90) return `in ${minutes} min`;
  const hours = Math.round(minutes / 60);
  if (hours < 36) return `in ${hours} h`;
  return `in ${Math.round(hours / 24)} days`;
}

export const count = (n: number) => n.toLocaleString();

/** 12345 → "12.3k". */
export function tokenCount(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** `$0.0123`: four decimals, as `guppy usage`. */
export const dollars = (n: number) => `$${n.toFixed(4)}`;
