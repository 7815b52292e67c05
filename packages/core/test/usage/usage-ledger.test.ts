import { appendFileSync, readFileSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fauxAssistantMessage, type Usage } from "@mariozechner/pi-ai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createThreadRunner } from "../../src/runner/create-thread-runner.js";
import { loadConfig } from "../../src/settings.js";
import { createStore } from "../../src/store/create-store.js";
import {
  createUsageRecorder,
  foldUsageLedger,
  USAGE_FILE,
  type UsageRecord,
} from "../../src/usage/usage-ledger.js";
import { createUsageTotals, readUsageReport } from "../../src/usage/usage-totals.js";
import { useFauxHome } from "../helpers/faux-home.js";
import { tempHome } from "../helpers/temp-home.js";

const record = (over: Partial<UsageRecord> = {}): UsageRecord => ({
  time: "2026-11-27T10:00:00.000Z",
  thread: "cli:local:default",
  model: "openai/gpt-x",
  input: 100,
  cacheRead: 10,
  cacheWrite: 5,
  output: 20,
  cost: 0.01,
  ...over,
});
const lines = (records: UsageRecord[]) => records.map((r) => `${JSON.stringify(r)}\n`).join("");

describe("usage ledger", () => {
  let t: ReturnType<typeof tempHome>;
  beforeEach(() => {
    t = tempHome();
  });
  afterEach(() => t.cleanup());
  const ledger = () => join(t.home, USAGE_FILE);

  it("appends one private line per request; a subscription's request records no spend", () => {
    const model = { provider: "openai", id: "gpt-x" } as Parameters<
      typeof createUsageRecorder
    >[0]["model"];
    const usage: Usage = {
      input: 1200,
      output: 80,
      cacheRead: 300,
      cacheWrite: 40,
      totalTokens: 1620,
      cost: { input: 0.1, output: 0.2, cacheRead: 0.01, cacheWrite: 0.02, total: 0.33 },
    };
    const now = () => new Date("2026-11-27T08:00:00.000Z");
    createUsageRecorder({ home: t.home, threadId: "cli:local:a", model, now })(usage);
    createUsageRecorder({ home: t.home, threadId: "cli:local:b", model, subscription: true, now })(
      usage,
    );
    expect(statSync(ledger()).mode & 0o777).toBe(0o600);
    const written = readFileSync(ledger(), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(written).toEqual([
      {
        time: "2026-11-27T08:00:00.000Z",
        thread: "cli:local:a",
        model: "openai/gpt-x",
        input: 1200,
        cacheRead: 300,
        cacheWrite: 40,
        output: 80,
        cost: 0.33,
      },
      {
        time: "2026-11-27T08:00:00.000Z",
        thread: "cli:local:b",
        model: "openai/gpt-x",
        input: 1200,
        cacheRead: 300,
        cacheWrite: 40,
        output: 80,
        cost: 0,
        subscription: true,
      },
    ]);
  });

  it("a failed append is logged, never thrown", () => {
    const errors: string[] = [];
    const record = createUsageRecorder({
      home: join(t.home, "missing", "dir"),
      threadId: "cli:local:a",
      model: { provider: "p", id: "m" } as Parameters<typeof createUsageRecorder>[0]["model"],
      logger: { debug() {}, info() {}, warn() {}, error: (m) => errors.push(m) },
    });
    expect(() =>
      record({
        input: 1,
        output: 1,
        cacheRead: 0,
        cacheWrite: 0,
        totalTokens: 2,
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
      }),
    ).not.toThrow();
    expect(errors).toEqual([
      `Could not record a request's usage in ${join(t.home, "missing", "dir", USAGE_FILE)}`,
    ]);
  });

  it("folds a ledger larger than its read buffer in one pass, lines cut by the buffer included", () => {
    // About 3 MiB: three reads, lines straddling each boundary.
    const n = 20_000;
    const records = Array.from({ length: n }, (_, i) =>
      record({ input: i, thread: `cli:local:t${i % 7}`, model: `p/m-${"x".repeat(i % 50)}` }),
    );
    writeFileSync(ledger(), lines(records));
    let count = 0;
    let input = 0;
    const folded = foldUsageLedger(ledger(), 0, (r) => {
      count++;
      input += r.input;
    });
    expect(count).toBe(n);
    expect(input).toBe((n * (n - 1)) / 2);
    expect(folded).toEqual({ end: statSync(ledger()).size, skipped: 0 });
  });

  it("totals by local day, thread (subagents in their parent's) and model over the last N days", () => {
    writeFileSync(
      ledger(),
      `${lines([
        // 23:30 UTC on the 26th is the 27th in Berlin.
        record({ time: "2026-11-26T23:30:00.000Z", input: 1 }),
        record({ time: "2026-11-26T12:00:00.000Z", input: 2, thread: "cli:local:default~sub-1" }),
        record({ time: "2026-11-20T12:00:00.000Z", input: 4, model: "anthropic/c" }),
        record({
          time: "2026-11-27T09:00:00.000Z",
          input: 8,
          thread: "telegram:1:1",
          model: "anthropic/c",
          cost: 0,
          subscription: true,
        }),
        // Out of range: older than 30 days.
        record({ time: "2026-10-01T09:00:00.000Z", input: 1000 }),
      ])}{"time":"2026-11-27T1\n`,
    );
    const now = new Date("2026-11-27T12:00:00.000Z");
    const at = (by: "day" | "thread" | "model", days = 30) =>
      readUsageReport({ home: t.home, days, by, timeZone: "Europe/Berlin", now });
    const byDay = at("day");
    expect(byDay.from).toBe("2026-10-29");
    expect(byDay.skipped).toBe(1);
    expect(byDay.rows.map((r) => [r.key, r.input, r.requests, r.subscription])).toEqual([
      ["2026-11-20", 4, 1, 0],
      ["2026-11-26", 2, 1, 0],
      ["2026-11-27", 9, 2, 1],
    ]);
    expect(byDay.total).toEqual({
      requests: 4,
      input: 15,
      cacheRead: 40,
      cacheWrite: 20,
      output: 80,
      cost: expect.closeTo(0.03, 10),
      subscription: 1,
    });
    expect(at("thread").rows.map((r) => [r.key, r.input])).toEqual([
      ["cli:local:default", 7],
      ["telegram:1:1", 8],
    ]);
    expect(at("model").rows.map((r) => [r.key, r.input])).toEqual([
      ["openai/gpt-x", 3],
      ["anthropic/c", 12],
    ]);
    expect(at("day", 1).rows.map((r) => r.key)).toEqual(["2026-11-27"]);
  });

  it("running totals read only what was appended since, and start over when the file is replaced", () => {
    let now = new Date("2026-11-27T12:00:00.000Z");
    const totals = createUsageTotals({ home: t.home, timeZone: "UTC", now: () => now });
    expect(totals.threadUsage("cli:local:default").thread.requests).toBe(0);
    writeFileSync(ledger(), lines([record({ input: 1 }), record({ input: 2, thread: "x:y:z" })]));
    // A line being written (no newline yet) waits for its end.
    appendFileSync(ledger(), JSON.stringify(record({ input: 4 })));
    let usage = totals.threadUsage("cli:local:default");
    expect([usage.thread.input, usage.today.input]).toEqual([1, 3]);
    appendFileSync(
      ledger(),
      `\n${lines([record({ input: 8, thread: "cli:local:default~sub-2" })])}`,
    );
    usage = totals.threadUsage("cli:local:default");
    expect([usage.thread.input, usage.thread.requests, usage.today.input]).toEqual([13, 3, 15]);
    now = new Date("2026-11-28T12:00:00.000Z");
    expect(totals.recent().today.requests).toBe(0);
    expect(totals.recent().month.input).toBe(15);
    truncateSync(ledger(), 0);
    writeFileSync(ledger(), lines([record({ input: 32 })]));
    expect(totals.recent().month.input).toBe(32);
  });
});

describe("usage ledger from a thread runner (faux provider)", () => {
  const f = useFauxHome();

  it("records every request the runner counts, across /new", async () => {
    const config = loadConfig({ env: { GUPPY_TIMEZONE: "UTC" }, home: f.t.home });
    const runner = createThreadRunner({
      threadId: "cli:local:default",
      config,
      resolved: f.resolved(),
      store: createStore({ home: f.t.home }),
    });
    const counted: Usage[] = [];
    runner.subscribe((e) => {
      if (e.type === "usage") counted.push(e.usage);
    });
    f.faux.setResponses([
      fauxAssistantMessage("one"),
      fauxAssistantMessage("two"),
      fauxAssistantMessage("three"),
    ]);
    await runner.prompt({ text: "first" });
    await runner.prompt({ text: "second" });
    runner.reset();
    await runner.prompt({ text: "third" });
    const ledger = readFileSync(join(f.t.home, USAGE_FILE), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as UsageRecord);
    expect(counted).toHaveLength(3);
    expect(ledger.map((r) => [r.thread, r.model, r.input, r.output, r.cacheRead])).toEqual(
      counted.map((u) => ["cli:local:default", "faux/faux-1", u.input, u.output, u.cacheRead]),
    );
    const totals = createUsageTotals({ home: f.t.home, timeZone: "UTC" });
    const thread = totals.threadUsage("cli:local:default").thread;
    expect(thread.requests).toBe(3);
    expect(thread.output).toBe(counted.reduce((sum, u) => sum + u.output, 0));
  });
});
