import type { LedgerTotals, RuntimeOrchestrator } from "@guppy/core";
import type { ScheduledEvent } from "@guppy/core/events";
import type { UsageTotalsReader } from "@guppy/core/usage";
import type { LoggedProblem } from "./recent-errors.js";

/** A channel of the gateway as `guppy status` shows it. */
export interface ChannelState {
  name: string;
  /** running: this gateway started it; off: the configuration does not turn it on. */
  state: "running" | "off";
}

/** The running gateway as GET /v1/status answers and `guppy status` prints it. */
export interface GatewayStatus {
  pid: number;
  /** ISO time `guppy serve` started. */
  started: string;
  uptimeSeconds: number;
  /** `provider/model-id`. */
  model: string;
  channels: ChannelState[];
  threads: {
    /** Threads with a run under way. */
    running: number;
    /** Prompts accepted and not running yet, over every thread. */
    queued: number;
    /** Threads with their agent loaded now. */
    loaded: number;
  };
  events: {
    count: number;
    /** The one that fires first; absent when none is due. */
    next?: { id: string; target: string; at: string };
  };
  /** From the usage ledger: local day and month (GUPPY_TIMEZONE). */
  usage: { today: LedgerTotals; month: LedgerTotals };
  /**
   * The gateway process's memory: `rssBytes` is the whole process's (the HTTP worker thread
   * included), `heapUsedBytes` the main thread's V8 heap.
   */
  memory: { rssBytes: number; heapUsedBytes: number };
  /** The last warnings and errors of the log, oldest first. */
  recentErrors: LoggedProblem[];
}

export interface GatewayStatusSources {
  started: Date;
  model: string;
  orchestrator: Pick<RuntimeOrchestrator, "counters" | "threads">;
  /** Every channel guppy has, and whether this gateway started it. */
  channels: () => ChannelState[];
  events: () => ScheduledEvent[];
  usage: UsageTotalsReader;
  /** The gateway logger's ring of its last warnings and errors (none given: an empty list). */
  recentErrors?: () => LoggedProblem[];
  now?: () => Date;
}

/** The gateway's status, read fresh at each call (the main thread's: the HTTP worker asks it). */
export function createGatewayStatus(sources: GatewayStatusSources): () => GatewayStatus {
  const now = sources.now ?? (() => new Date());
  return () => {
    const counters = sources.orchestrator.counters();
    const threads = sources.orchestrator.threads({ onDisk: false });
    const events = sources.events();
    let next: { event: ScheduledEvent; at: number } | undefined;
    for (const e of events) {
      const at = e.nextRun === undefined ? Number.NaN : Date.parse(e.nextRun);
      if (!Number.isNaN(at) && (next === undefined || at < next.at)) next = { event: e, at };
    }
    return {
      pid: process.pid,
      started: sources.started.toISOString(),
      uptimeSeconds: Math.max(0, Math.floor((now().getTime() - sources.started.getTime()) / 1000)),
      model: sources.model,
      channels: sources.channels(),
      threads: {
        running: counters.runningNow,
        queued: threads.reduce((sum, t) => sum + t.queued, 0),
        loaded: counters.loadedRunners,
      },
      events: {
        count: events.length,
        ...(next
          ? {
              next: {
                id: next.event.id,
                target: next.event.target,
                at: new Date(next.at).toISOString(),
              },
            }
          : {}),
      },
      usage: sources.usage.recent(),
      memory: memoryNow(),
      recentErrors: sources.recentErrors?.() ?? [],
    };
  };
}

/** The process's resident set and the main thread's heap, read at each status. */
function memoryNow(): GatewayStatus["memory"] {
  const m = process.memoryUsage();
  return { rssBytes: m.rss, heapUsedBytes: m.heapUsed };
}

/** GET /v1/status's totals (channels/http/status-route.ts) read back (a client's side: `guppy status`, an attached chat). */
export function totalsFromJson(value: unknown): LedgerTotals {
  const t = (value ?? {}) as Record<string, unknown>;
  const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
  return {
    requests: n(t.requests),
    input: n(t.input),
    cacheRead: n(t.cache_read),
    cacheWrite: n(t.cache_write),
    output: n(t.output),
    cost: n(t.cost),
    subscription: n(t.subscription_requests),
  };
}
