import type { Usage } from "@mariozechner/pi-ai";
import type { UsageTotals } from "../types.js";

export function emptyTotals(): UsageTotals {
  return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: 0, requests: 0 };
}

export function addUsage(totals: UsageTotals, usage: Usage): UsageTotals {
  return {
    input: totals.input + usage.input,
    output: totals.output + usage.output,
    cacheRead: totals.cacheRead + usage.cacheRead,
    cacheWrite: totals.cacheWrite + usage.cacheWrite,
    cost: totals.cost + (usage.cost?.total ?? 0),
    requests: totals.requests + 1,
  };
}
