import { describe, expect, it } from "vitest";
import {
  addDays,
  cacheHitRatio,
  costText,
  everyDay,
  formatRatio,
  stack,
} from "../../ui/src/pages/usage/usage-series.js";

const totals = (over: Partial<Record<string, number>> = {}) => ({
  requests: 0,
  input: 0,
  cache_read: 0,
  cache_write: 0,
  output: 0,
  cost: 0,
  subscription_requests: 0,
  ...over,
});

/** The usage page's numbers from GET /v1/usage's answer (ui/src/pages/usage/usage-series.ts). */
describe("usage page series", () => {
  it("gives every day of the range, zeros where the ledger has no requests", () => {
    const days = everyDay({
      days: 5,
      from: "2026-02-26",
      to: "2026-03-02",
      by: "day",
      rows: [
        { day: "2026-02-27", ...totals({ requests: 2, input: 10, cost: 0.5 }) },
        { day: "2026-03-02", ...totals({ requests: 1, output: 7 }) },
      ],
      total: totals(),
    });
    expect(days.map((d) => d.day)).toEqual([
      "2026-02-26",
      "2026-02-27",
      "2026-02-28",
      "2026-03-01",
      "2026-03-02",
    ]);
    expect(days.map((d) => d.requests)).toEqual([0, 2, 0, 0, 1]);
    expect(days[1]).toMatchObject({ input: 10, cost: 0.5 });
    expect(days[4]).toMatchObject({ output: 7, input: 0 });
  });

  it("never gives more days than the report's `days`", () => {
    const days = everyDay({
      days: 2,
      from: "2026-01-01",
      to: "2026-12-31",
      by: "day",
      rows: [],
      total: totals(),
    });
    expect(days).toHaveLength(2);
    expect(addDays("2024-02-28", 1)).toBe("2024-02-29");
  });

  it("stacks layers as running sums, bottom first", () => {
    expect(
      stack([
        [1, 0, 3],
        [10, 0, 0],
        [100, 5, 1],
      ]),
    ).toEqual([
      [1, 0, 3],
      [11, 0, 3],
      [111, 5, 4],
    ]);
  });

  it("gives the cache-hit ratio of prompt tokens, none without any", () => {
    expect(cacheHitRatio({ input: 1000, cache_read: 3000 })).toBe(0.75);
    expect(cacheHitRatio({ input: 0, cache_read: 0 })).toBeNull();
    expect(formatRatio(0.75)).toBe("75.0%");
    expect(formatRatio(null)).toBe("–");
  });

  it("names a subscription's requests instead of a cost", () => {
    expect(costText(totals({ requests: 2, subscription_requests: 2 }))).toBe("subscription");
    expect(costText(totals({ requests: 3, subscription_requests: 1, cost: 0.25 }))).toBe(
      "$0.2500 + 1 on subscription",
    );
    expect(costText(totals({ requests: 1 }))).toBe("$0.0000");
  });
});
