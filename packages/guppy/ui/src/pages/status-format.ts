// Numbers and times as the Status and Access pages show them (the browser's locale and zone).

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

/** An ISO time in local time, to the second; the text as given when it is not a time. */
export function localTime(iso: string): string {
  const t = new Date(iso);
  return Number.isNaN(t.getTime())
    ? iso
    : t.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" });
}

export const count = (n: number) => n.toLocaleString();

/** `$0.0123`: four decimals, as `guppy usage`. */
export const dollars = (n: number) => `$${n.toFixed(4)}`;
