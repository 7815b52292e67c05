import type { UsageReportJson, UsageTotalsJson } from "../../api/usage.js";
import { dollars } from "../../format.js";

// The numbers the usage page plots and tabulates, from GET /v1/usage's answer: one entry per day
// of the range (the ledger's report lists only days with requests; the others are zeros, so the
// x axis always spans the whole range), the stacked token series, the cache-hit ratio.

/** A day of the range with its totals (zeros on a day without requests). */
export interface UsageDay extends UsageTotalsJson {
  day: string;
}

const ZERO: UsageTotalsJson = {
  requests: 0,
  input: 0,
  cache_read: 0,
  cache_write: 0,
  output: 0,
  cost: 0,
  subscription_requests: 0,
};

/** `date` (`YYYY-MM-DD`) moved by `days` calendar days (as core's addDays). */
export function addDays(date: string, days: number): string {
  const [y, m, d] = date.split("-").map(Number);
  return new Date(Date.UTC(y ?? 1970, (m ?? 1) - 1, (d ?? 1) + days)).toISOString().slice(0, 10);
}

/** Every day from the report's `from` to its `to` (the gateway's days), oldest first. */
export function everyDay(report: UsageReportJson<"day">): UsageDay[] {
  const byDay = new Map(report.rows.map((row) => [row.day, row]));
  const days: UsageDay[] = [];
  // Bounded by the report's own `days`, whatever `from`/`to` say.
  for (
    let day = report.from, i = 0;
    day <= report.to && i < report.days;
    day = addDays(day, 1), i++
  ) {
    const row = byDay.get(day);
    days.push({ ...ZERO, ...row, day });
  }
  return days;
}

/**
 * Tokens read from the cache of all prompt tokens: cache_read / (input + cache_read); null on a
 * day with no prompt tokens (nothing to hit).
 */
export function cacheHitRatio(t: Pick<UsageTotalsJson, "input" | "cache_read">): number | null {
  const prompt = t.input + t.cache_read;
  return prompt > 0 ? t.cache_read / prompt : null;
}

/**
 * Running sums of `layers` (bottom first): the i-th result is the top edge of layer i, what a
 * stacked chart draws (uPlot does not stack by itself).
 */
export function stack(layers: number[][]): number[][] {
  const sums: number[][] = [];
  let below: number[] | undefined;
  for (const layer of layers) {
    const top = layer.map((v, i) => v + (below?.[i] ?? 0));
    sums.push(top);
    below = top;
  }
  return sums;
}

const tokenFormat = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });

/** A token count, grouped as the reader's locale groups digits. */
export const formatTokens = (n: number) => tokenFormat.format(n);

/** Dollars to four decimals (a day of small requests costs fractions of a cent). */

/** Dollars for a headline: cents from a dollar up, else four decimals. */
export const formatCostShort = (n: number) => (n >= 1 ? `$${n.toFixed(2)}` : dollars(n));

/** A ratio as a percentage with one decimal, or a dash when there is none. */
export const formatRatio = (r: number | null) => (r === null ? "–" : `${(r * 100).toFixed(1)}%`);

/** `2026-11-27` → `11-27`: the axis's short label. */
export const shortDay = (day: string) => day.slice(5);

/**
 * What some requests cost: "subscription" when all went through a subscription's sign-in (no
 * spend per token), else the dollars, with the subscription's share named when there is one.
 */
export function costText(t: Pick<UsageTotalsJson, "requests" | "cost" | "subscription_requests">) {
  if (t.requests > 0 && t.subscription_requests === t.requests) return "subscription";
  const spent = dollars(t.cost);
  return t.subscription_requests > 0
    ? `${spent} + ${t.subscription_requests} on subscription`
    : spent;
}
