import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MockLlm, startMockLlm } from "../helpers/mock-llm.js";
import { cleanEnv, runCli, tempHome } from "../helpers/run-cli.js";
import { type ServeProcess, startServe, threadMessages, waitFor } from "../serve/serve-harness.js";

/** Prices of settings.json's `modelCost`, dollars per million tokens. */
const PRICE = { input: 2, output: 10 };

/**
 * The usage ledger end to end: what the mock LLM reported for each request, over chat and serve
 * turns and across /new, is what `/status`, `guppy usage` and `guppy status` (GET /v1/status)
 * total — tokens and the cost `modelCost` prices them at.
 */
describe("usage ledger, guppy usage and guppy status", () => {
  let llm: MockLlm;
  const home = tempHome();
  /** Each request's reported usage, in order. */
  const reported: Array<{ input: number; output: number }> = [];
  let serve: ServeProcess | undefined;

  beforeAll(async () => {
    llm = await startMockLlm((_request, index) => {
      const usage = { input: 1000 + 137 * index, output: 11 + 3 * index };
      reported.push(usage);
      return {
        content: `answer ${index}`,
        usage: {
          prompt_tokens: usage.input,
          completion_tokens: usage.output,
          total_tokens: usage.input + usage.output,
        },
      };
    });
    writeFileSync(join(home.home, "settings.json"), JSON.stringify({ modelCost: PRICE }));
  });
  afterAll(async () => {
    if (serve) {
      serve.child.kill("SIGTERM");
      await serve.exited;
    }
    await llm.stop();
    home.cleanup();
  });

  const env = () =>
    cleanEnv({
      ...llm.env("openai-completions"),
      GUPPY_HOME: home.home,
      GUPPY_TIMEZONE: "UTC",
      GUPPY_SANDBOX: "host",
    });
  const sum = (from: number, to = reported.length) => {
    const part = reported.slice(from, to);
    const input = part.reduce((s, u) => s + u.input, 0);
    const output = part.reduce((s, u) => s + u.output, 0);
    return {
      requests: part.length,
      input,
      output,
      cost: (input * PRICE.input + output * PRICE.output) / 1e6,
    };
  };
  const n = (x: number) => x.toLocaleString("en-US");

  it("a chat's /status shows the thread's total across /new and today's", async () => {
    const first = await runCli(["chat", "-m", "one"], { env: env() });
    expect(first.stdout).toBe("answer 0\n");
    // Lines that come together are one pasted prompt; a slash command ends one.
    const r = await runCli(["chat"], { env: env(), input: "two\n/new\nthree\n/status\n/exit\n" });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(reported).toHaveLength(3);
    const t = sum(0);
    expect(r.stdout).toContain(
      `thread total 3 requests, ${n(t.input)} in, 0 cached read, 0 cache write, ${n(t.output)} out, $${t.cost.toFixed(4)} (across /new)`,
    );
    expect(r.stdout).toContain(`today        3 requests, ${n(t.input)} in,`);
  });

  it("serve turns go into the same ledger; guppy status asks the gateway; an attached chat's /status too", async () => {
    serve = await startServe(home.home, {
      ...llm.env("openai-completions"),
      GUPPY_TIMEZONE: "UTC",
      GUPPY_SANDBOX: "host",
    });
    const thread = "http:api:usage";
    const say = async (text: string, answers: number) => {
      const r = await serve?.api(`/v1/threads/${thread}/messages`, {
        method: "POST",
        body: JSON.stringify({ text, user: "tester" }),
      });
      expect(r?.status).toBe(202);
      await waitFor(
        async () =>
          serve && (await threadMessages(serve, thread)).filter((m) => m.is_bot).length >= answers
            ? true
            : undefined,
        20_000,
        `answer ${answers}`,
      );
    };
    await say("four", 1);
    expect((await serve.api(`/v1/threads/${thread}/new`, { method: "POST" })).status).toBe(200);
    await say("five", 1);
    await waitFor(() => (reported.length === 5 ? true : undefined), 10_000, "5 requests");

    // The HTTP thread's total across its /new, in its status route.
    const threadStatus = (await (await serve.api(`/v1/threads/${thread}/status`)).json()) as {
      usage: { thread: { requests: number; input: number } };
    };
    expect(threadStatus.usage.thread).toMatchObject({ requests: 2, input: sum(3).input });

    // No token, no status.
    expect((await fetch(`${serve.url}/v1/status`)).status).toBe(401);

    const all = sum(0);
    const json = await runCli(["status", "--json"], { env: env() });
    expect(json.stderr).toBe("");
    expect(json.code).toBe(0);
    const status = JSON.parse(json.stdout) as Record<string, unknown>;
    expect(status).toMatchObject({
      status: "running",
      pid: serve.child.pid,
      model: "openai/mock-gpt",
      threads: { running: 0, queued: 0 },
      events: { count: 0, next: null },
    });
    expect(status.channels).toContainEqual({ name: "http", state: "running" });
    expect(status.channels).toContainEqual({ name: "telegram", state: "off" });
    const usage = status.usage as Record<string, Record<string, number>>;
    for (const period of ["today", "month"]) {
      expect(usage[period]).toMatchObject({
        requests: 5,
        input: all.input,
        output: all.output,
        cache_read: 0,
        cache_write: 0,
        subscription_requests: 0,
      });
      expect(usage[period]?.cost).toBeCloseTo(all.cost, 10);
    }

    const plain = await runCli(["status"], { env: env() });
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain(`guppy is running (pid ${serve.child.pid}, up `);
    expect(plain.stdout).toContain("model     openai/mock-gpt");
    expect(plain.stdout).toMatch(/channels {2}http running, telegram off/);
    expect(plain.stdout).toContain(
      `today     5 requests, ${n(all.input)} in, 0 cached read, 0 cache write, ${n(all.output)} out, $${all.cost.toFixed(4)}`,
    );

    // A chat attached to the gateway: /status comes from it, the ledger's totals with it.
    const attached = await runCli(["chat"], { env: env(), input: "/status\n/exit\n" });
    expect(attached.code).toBe(0);
    expect(attached.stdout).toContain(`thread total 3 requests, ${n(sum(0, 3).input)} in,`);
    expect(attached.stdout).toContain(`today        5 requests, ${n(all.input)} in,`);
  });

  it("guppy usage totals the ledger by model, thread and day", async () => {
    const all = sum(0);
    const byModel = await runCli(["usage", "--by", "model", "--json"], { env: env() });
    expect(byModel.stderr).toBe("");
    expect(byModel.code).toBe(0);
    const report = JSON.parse(byModel.stdout) as {
      by: string;
      days: number;
      rows: Array<Record<string, unknown>>;
      total: Record<string, number>;
    };
    expect(report).toMatchObject({ by: "model", days: 30 });
    const expected = {
      requests: 5,
      input: all.input,
      cache_read: 0,
      cache_write: 0,
      output: all.output,
      subscription_requests: 0,
    };
    expect(report.rows).toEqual([
      { model: "openai/mock-gpt", ...expected, cost: expect.closeTo(all.cost, 10) },
    ]);
    expect(report.total).toEqual({ ...expected, cost: expect.closeTo(all.cost, 10) });

    const byThread = JSON.parse(
      (await runCli(["usage", "--by", "thread", "--json", "--days", "7"], { env: env() })).stdout,
    ) as { rows: Array<{ thread: string; requests: number; input: number }> };
    expect(byThread.rows.map((r) => [r.thread, r.requests, r.input]).sort()).toEqual(
      [
        ["cli:local:default", 3, sum(0, 3).input],
        ["http:api:usage", 2, sum(3).input],
      ].sort(),
    );

    const table = await runCli(["usage"], { env: env() });
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^Usage over the last 30 days \(.+\), by day\n/);
    expect(table.stdout).toMatch(
      new RegExp(
        `\\ntotal +5 +${n(all.input)} +0 +0 +${n(all.output)} +\\$${all.cost.toFixed(4)}\\n`,
      ),
    );

    const bad = await runCli(["usage", "--by", "week"], { env: env() });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      'guppy: --by must be day, thread or model, not "week" (usage: guppy usage [--days N] [--by day|thread|model] [--json])\n',
    );
    const days = await runCli(["usage", "--days", "-3"], { env: env() });
    expect(days.code).toBe(2);
    expect(days.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("guppy status says the gateway is not running once it stopped", async () => {
    if (serve) {
      serve.child.kill("SIGTERM");
      expect(await serve.exited).toBe(0);
      serve = undefined;
    }
    const r = await runCli(["status"], { env: env() });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("guppy is not running (no gateway on 127.0.0.1:7420)\n");
  });
});

describe("guppy usage and a subscription's requests", () => {
  const home = tempHome();
  afterAll(() => home.cleanup());

  it("shows 'subscription' for them, not a dollar cost, and counts them in --json", async () => {
    const today = new Date().toISOString();
    const line = (model: string, cost: number, subscription: boolean) =>
      `${JSON.stringify({
        time: today,
        thread: "telegram:1:1",
        model,
        input: 100,
        cacheRead: 0,
        cacheWrite: 0,
        output: 10,
        cost,
        ...(subscription ? { subscription: true } : {}),
      })}\n`;
    writeFileSync(
      join(home.home, "usage.jsonl"),
      line("anthropic/claude-x", 0, true) + line("openai/gpt-x", 0.5, false),
    );
    const env = cleanEnv({ GUPPY_HOME: home.home, GUPPY_TIMEZONE: "UTC" });
    const table = await runCli(["usage", "--by", "model"], { env });
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/\nanthropic\/claude-x +1 +100 +0 +0 +10 +subscription\n/);
    expect(table.stdout).toMatch(/\nopenai\/gpt-x +1 +100 +0 +0 +10 +\$0\.5000\n/);
    expect(table.stdout).toMatch(/\ntotal +2 +200 +0 +0 +20 +\$0\.5000 \+ subscription\n/);
    const json = JSON.parse((await runCli(["usage", "--by", "model", "--json"], { env })).stdout);
    expect(json.total).toMatchObject({ requests: 2, cost: 0.5, subscription_requests: 1 });
  });
});
