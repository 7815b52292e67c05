import { get, query } from "./client.js";

// The usage ledger's route (docs/channels.md "HTTP API"): GET /v1/usage, the ledger's totals by
// day, thread or model (the JSON `guppy usage --json` prints). Today's and this month's totals
// are GET /v1/status's `usage` (status.ts).

/** Totals of ledger requests, as the API spells them. */
export interface UsageTotalsJson {
  requests: number;
  input: number;
  cache_read: number;
  cache_write: number;
  output: number;
  /** Dollars reported by the providers; a subscription's requests add none. */
  cost: number;
  /** Of `requests`, those made through a subscription's sign-in: no spend, not in `cost`. */
  subscription_requests: number;
}

export type UsageGrouping = "day" | "thread" | "model";

/** A row of GET /v1/usage: its key under the grouping's name (`day`, `thread` or `model`). */
export type UsageRowJson<B extends UsageGrouping> = UsageTotalsJson & { [K in B]: string };

export interface UsageReportJson<B extends UsageGrouping> {
  days: number;
  /** The first local day counted and today (`YYYY-MM-DD`, the gateway's time zone). */
  from: string;
  to: string;
  by: B;
  /** Only days, threads or models with requests; days oldest first, else by cost. */
  rows: Array<UsageRowJson<B>>;
  total: UsageTotalsJson;
}

/** The ledger's totals over the last `days` local days, today included. */
export const usageReport = <B extends UsageGrouping>(days: number, by: B) =>
  get<UsageReportJson<B>>(`/v1/usage${query({ days, by })}`);
