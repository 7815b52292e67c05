import { join } from "node:path";
import type { LedgerTotals } from "@guppy/core";
import {
  readUsageReport,
  USAGE_FILE,
  type UsageGrouping,
  type UsageReport,
} from "@guppy/core/usage";
import {
  DEFAULT_USAGE_DAYS,
  MAX_USAGE_DAYS,
  parseUsageDays,
  parseUsageGrouping,
  usageReportJson,
} from "../channels/http/usage-route.js";
import { ExitCode, UsageError } from "../cli/cli-error.js";
import { rejectExtraArguments } from "../cli/extra-arguments.js";
import type { CliArgs } from "../cli/parse-cli-args.js";
import { costText } from "../terminal/status-text.js";
import { loadCliConfig } from "./load-cli-config.js";

const USAGE = "guppy usage [--days N] [--by day|thread|model] [--json]";

/**
 * `guppy usage`: the tokens and cost of every model request guppy made (the ledger,
 * `<home>/usage.jsonl`), totalled by local day, thread or model over the last N days.
 */
export async function usageCommand(args: CliArgs): Promise<number> {
  rejectExtraArguments(args, USAGE);
  const days = daysFlag(args.flags.days);
  const by = byFlag(args.flags.by);
  const config = loadCliConfig(args);
  const report = readUsageReport({ home: config.home, days, by, timeZone: config.timezone });
  if (report.skipped > 0) {
    process.stderr.write(
      `guppy: warning: skipped ${report.skipped} unreadable line(s) of ${join(config.home, USAGE_FILE)}\n`,
    );
  }
  process.stdout.write(
    args.flags.json === true
      ? `${JSON.stringify(usageReportJson(report, days), null, 2)}\n`
      : usageTable(report, days),
  );
  return ExitCode.ok;
}

function daysFlag(value: string | boolean | undefined): number {
  if (value === undefined) return DEFAULT_USAGE_DAYS;
  const days = typeof value === "string" ? parseUsageDays(value) : undefined;
  if (days !== undefined) return days;
  throw new UsageError(
    `--days must be a whole number of days from 1 to ${MAX_USAGE_DAYS}, not ${JSON.stringify(value)} (usage: ${USAGE})`,
  );
}

function byFlag(value: string | boolean | undefined): UsageGrouping {
  if (value === undefined) return "day";
  const found = typeof value === "string" ? parseUsageGrouping(value) : undefined;
  if (found) return found;
  throw new UsageError(
    `--by must be day, thread or model, not ${JSON.stringify(value)} (usage: ${USAGE})`,
  );
}

const int = (x: number) => Math.round(x).toLocaleString("en-US");

/** The table: one row per day, thread or model, and a total line. */
function usageTable(report: UsageReport, days: number): string {
  const heading = `Usage over the last ${days} day${days === 1 ? "" : "s"} (${report.from} to ${report.to}), by ${report.by}`;
  if (report.rows.length === 0) return `${heading}: no model requests.\n`;
  const header = [report.by, "requests", "input", "cached read", "cache write", "output", "cost"];
  const line = (key: string, t: LedgerTotals) => [
    key,
    int(t.requests),
    int(t.input),
    int(t.cacheRead),
    int(t.cacheWrite),
    int(t.output),
    costText(t),
  ];
  const rows = [header, ...report.rows.map((r) => line(r.key, r)), line("total", report.total)];
  const widths = header.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  const format = (r: string[]) =>
    r
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  const rule = widths.map((w) => "-".repeat(w)).join("  ");
  const body = rows.slice(1, -1).map(format);
  return `${heading}\n\n${[format(header), rule, ...body, rule, format(rows.at(-1) ?? [])].join("\n")}\n`;
}
