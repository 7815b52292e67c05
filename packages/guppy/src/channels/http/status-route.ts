import type { LedgerTotals, ThreadUsage } from "@guppy/core";
import type { Context } from "hono";
import type { GatewayStatus } from "../../gateway/gateway-status.js";
import type { UsageTotalsJson } from "./api-types.js";
import type { HttpBackend } from "./http-backend.js";
import { jsonError } from "./json-error.js";

/** Ledger totals as the HTTP API shows them (snake_case, as its other answers). */
export function totalsJson(t: LedgerTotals): UsageTotalsJson {
  return {
    requests: t.requests,
    input: t.input,
    cache_read: t.cacheRead,
    cache_write: t.cacheWrite,
    output: t.output,
    cost: t.cost,
    // Of `requests`, those made through a subscription's sign-in: no spend, not in `cost`.
    subscription_requests: t.subscription,
  };
}

/**
 * A thread status's `usage` field (GET /v1/threads/{id}/status): its total across /new and
 * today's; none where the orchestrator was not told of the ledger.
 */
export function threadUsageJson(usage: ThreadUsage | undefined) {
  return usage
    ? { usage: { thread: totalsJson(usage.thread), today: totalsJson(usage.today) } }
    : {};
}

/** GET /v1/status's answer (docs/channels.md). */
export function gatewayStatusJson(s: GatewayStatus) {
  return {
    status: "running",
    pid: s.pid,
    started: s.started,
    uptime_seconds: s.uptimeSeconds,
    model: s.model,
    channels: s.channels,
    threads: s.threads,
    events: {
      count: s.events.count,
      next: s.events.next ?? null,
    },
    usage: { today: totalsJson(s.usage.today), month: totalsJson(s.usage.month) },
    memory: { rss_bytes: s.memory.rssBytes, heap_used_bytes: s.memory.heapUsedBytes },
    recent_errors: s.recentErrors.map((e) => ({
      time: e.time,
      level: e.level,
      message: e.message,
    })),
  };
}

/**
 * GET /v1/status: the gateway's uptime, model, channels, threads running and queued, scheduled
 * events, today's and this month's usage, memory and the log's recent warnings and errors —
 * what `guppy status` prints.
 */
export async function statusRoute(c: Context, backend: HttpBackend): Promise<Response> {
  const status = await backend.gatewayStatus();
  if (!status) return jsonError(c, 503, "This gateway gives no status.", "unavailable");
  return c.json(gatewayStatusJson(status));
}
