import type { UsageGrouping, UsageReport } from "@guppy/core/usage";
import type { Context } from "hono";
import type { UsageReportJson, UsageRowJson } from "./api-types.js";
import type { HttpBackend } from "./http-backend.js";
import { jsonError } from "./json-error.js";
import { totalsJson } from "./status-route.js";

/** The groupings of the ledger's report, as `--by` and `?by=` take them. */
export const USAGE_GROUPINGS: readonly UsageGrouping[] = ["day", "thread", "model"];
/** The longest look back taken: ten years of days. */
export const MAX_USAGE_DAYS = 3660;
/** The look back without `--days` / `?days=`. */
export const DEFAULT_USAGE_DAYS = 30;

/** `days` as given (a whole number from 1 to MAX_USAGE_DAYS), else undefined. */
export function parseUsageDays(value: string): number | undefined {
  return /^[1-9][0-9]*$/.test(value) && Number(value) <= MAX_USAGE_DAYS ? Number(value) : undefined;
}

/** `by` as given, else undefined. */
export function parseUsageGrouping(value: string): UsageGrouping | undefined {
  return USAGE_GROUPINGS.find((g) => g === value);
}

/**
 * The ledger's report as `guppy usage --json` prints it and GET /v1/usage answers: one shape for
 * both, numbers as numbers; `subscription_requests` made no spend.
 */
export function usageReportJson(report: UsageReport, days: number): UsageReportJson {
  return {
    days,
    from: report.from,
    to: report.to,
    by: report.by,
    // A computed key types as an index signature: the row is `by`'s key and the totals.
    rows: report.rows.map(
      (row) => ({ [report.by]: row.key, ...totalsJson(row) }) as UsageRowJson<UsageGrouping>,
    ),
    total: totalsJson(report.total),
  };
}

/** GET /v1/usage?days=N&by=day|thread|model: the usage ledger's totals, as `guppy usage --json`. */
export async function usageRoute(c: Context, backend: HttpBackend): Promise<Response> {
  const daysText = c.req.query("days");
  const byText = c.req.query("by");
  const days = daysText === undefined ? DEFAULT_USAGE_DAYS : parseUsageDays(daysText);
  if (days === undefined) {
    return jsonError(
      c,
      400,
      `\`days\` must be a whole number of days from 1 to ${MAX_USAGE_DAYS}, not ${JSON.stringify(daysText)}.`,
      "invalid_request_error",
    );
  }
  const by = byText === undefined ? "day" : parseUsageGrouping(byText);
  if (by === undefined) {
    return jsonError(
      c,
      400,
      `\`by\` must be day, thread or model, not ${JSON.stringify(byText)}.`,
      "invalid_request_error",
    );
  }
  const report = await backend.usageReport({ days, by });
  if (!report) return jsonError(c, 503, "This gateway keeps no usage ledger.", "unavailable");
  return c.json(usageReportJson(report, days));
}
