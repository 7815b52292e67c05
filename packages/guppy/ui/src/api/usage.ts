import type { UsageGrouping, UsageReportJson } from "../../../src/channels/http/api-types.js";
import { get, query } from "./client.js";

// The usage ledger's route (docs/channels.md "HTTP API"): GET /v1/usage, the ledger's totals by
// day, thread or model (the JSON `guppy usage --json` prints). Today's and this month's totals
// are GET /v1/status's `usage` (status.ts). The JSON's types are the routes' (api-types.ts).

export type {
  UsageGrouping,
  UsageReportJson,
  UsageRowJson,
  UsageTotalsJson,
} from "../../../src/channels/http/api-types.js";

/** The ledger's totals over the last `days` local days, today included. */
export const usageReport = <B extends UsageGrouping>(days: number, by: B) =>
  get<UsageReportJson<B>>(`/v1/usage${query({ days, by })}`);
