import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRedactor } from "@guppy/core";
import { afterEach, describe, expect, it } from "vitest";
import { gatewayStatusJson } from "../../src/channels/http/status-route.js";
import { createGatewayLogger } from "../../src/gateway/gateway-logger.js";
import { createGatewayStatus } from "../../src/gateway/gateway-status.js";
import { createRecentErrors } from "../../src/gateway/recent-errors.js";

const homes: string[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});
const home = () => {
  const h = mkdtempSync(join(tmpdir(), "guppy-recent-"));
  homes.push(h);
  return h;
};

describe("recent errors (GET /v1/status's recent_errors)", () => {
  it("keeps the last N, oldest first, each one line", () => {
    let t = Date.parse("2026-11-27T10:00:00Z");
    const ring = createRecentErrors(3, () => {
      t += 1000;
      return new Date(t);
    });
    expect(ring.list()).toEqual([]);
    ring.add("warn", "one");
    ring.add("error", "two\nlines");
    expect(ring.list().map((e) => e.message)).toEqual(["one", "two lines"]);
    for (const m of ["three", "four", "five"]) ring.add("error", m);
    const kept = ring.list();
    expect(kept.map((e) => e.message)).toEqual(["three", "four", "five"]);
    expect(kept.map((e) => e.time)).toEqual([
      "2026-11-27T10:00:03.000Z",
      "2026-11-27T10:00:04.000Z",
      "2026-11-27T10:00:05.000Z",
    ]);
    ring.add("warn", "x".repeat(2000));
    expect(ring.list().at(-1)?.message.length).toBe(500);
  });

  it("the gateway logger puts its warnings, errors and runs' error events there, redacted; not info", () => {
    const key = "sk-live-0123456789abcdef";
    const gw = createGatewayLogger({
      home: home(),
      debug: false,
      write: () => {},
      redactor: createRedactor([{ name: "GUPPY_API_KEY", value: key }]),
    });
    gw.logger.info("gateway ready");
    gw.logger.warn("Could not write gateway.json");
    gw.logger.error(`The provider refused ${key}`, { error: "401" });
    gw.event({ type: "activated", threadId: "http:api:a" });
    gw.event({
      type: "runner",
      threadId: "telegram:42",
      inboxId: "in-1",
      event: { type: "error", kind: "provider", message: "500 the model broke\u001b[2J" },
    } as Parameters<typeof gw.event>[0]);
    gw.flush();
    const recent = gw.recentErrors();
    expect(recent.map(({ level, message }) => ({ level, message }))).toEqual([
      { level: "warn", message: "warning: Could not write gateway.json" },
      {
        level: "error",
        message: "error: The provider refused [redacted: GUPPY_API_KEY] (401)",
      },
      {
        level: "error",
        message: "telegram:42 error (provider): 500 the model broke\\x1b[2J",
      },
    ]);
    for (const e of recent) expect(Date.parse(e.time)).not.toBeNaN();
  });

  it("GET /v1/status's JSON carries the process's memory and the ring", () => {
    const gw = createGatewayLogger({ home: home(), debug: false, write: () => {} });
    gw.logger.error("Run failed on http:api:a", { error: "boom" });
    const zero = {
      requests: 0,
      input: 0,
      cacheRead: 0,
      cacheWrite: 0,
      output: 0,
      cost: 0,
      subscription: 0,
    };
    const status = createGatewayStatus({
      started: new Date(Date.now() - 5000),
      model: "openai/mock-gpt",
      orchestrator: {
        counters: () => ({ runningNow: 0, loadedRunners: 0 }) as never,
        threads: () => [],
      },
      channels: () => [{ name: "http", state: "running" }],
      events: () => [],
      usage: { recent: () => ({ today: zero, month: zero }) } as never,
      recentErrors: gw.recentErrors,
    });
    const json = gatewayStatusJson(status());
    expect(json.memory.rss_bytes).toBeGreaterThan(10_000_000);
    expect(json.memory.heap_used_bytes).toBeGreaterThan(1_000_000);
    expect(json.memory.heap_used_bytes).toBeLessThan(json.memory.rss_bytes);
    expect(json.recent_errors).toEqual([
      {
        time: expect.any(String),
        level: "error",
        message: "error: Run failed on http:api:a (boom)",
      },
    ]);
  });
});
