// @guppy/core/usage: the usage ledger (`<home>/usage.jsonl`) — how a request's usage is
// recorded, and its totals by day, thread or model.
export {
  createUsageRecorder,
  foldUsageLedger,
  USAGE_FILE,
  type UsageRecord,
  type UsageRecorderOptions,
} from "./usage-ledger.js";
export {
  addDays,
  createUsageTotals,
  emptyLedgerTotals,
  readUsageReport,
  type UsageGrouping,
  type UsageReport,
  type UsageReportOptions,
  type UsageRow,
  type UsageTotalsReader,
} from "./usage-totals.js";
