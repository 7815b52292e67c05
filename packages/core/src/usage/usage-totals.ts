import { statSync } from "node:fs";
import { join } from "node:path";
import { canonicalThreadId } from "../store/thread-layout.js";
import { localParts } from "../time/local-time.js";
import type { LedgerTotals, ThreadUsage } from "../types.js";
import { foldUsageLedger, USAGE_FILE, type UsageRecord } from "./usage-ledger.js";

// Reading the ledger: totals by local day, thread or model (`guppy usage`), and the running
// totals `/status` and `GET /v1/status` show, kept up to date by reading only what was appended.

export function emptyLedgerTotals(): LedgerTotals {
  return {
    requests: 0,
    input: 0,
    cacheRead: 0,
    cacheWrite: 0,
    output: 0,
    cost: 0,
    subscription: 0,
  };
}

/** Adds one record to `totals` in place (a subscription's request adds no cost). */
export function addRecord(totals: LedgerTotals, r: UsageRecord): void {
  totals.requests++;
  totals.input += r.input;
  totals.cacheRead += r.cacheRead;
  totals.cacheWrite += r.cacheWrite;
  totals.output += r.output;
  if (r.subscription) totals.subscription++;
  else totals.cost += r.cost;
}

function addTotals(into: LedgerTotals, from: LedgerTotals): void {
  into.requests += from.requests;
  into.input += from.input;
  into.cacheRead += from.cacheRead;
  into.cacheWrite += from.cacheWrite;
  into.output += from.output;
  into.cost += from.cost;
  into.subscription += from.subscription;
}

/**
 * The local day (`YYYY-MM-DD` in `timeZone`) of ISO times, remembered per quarter hour (every
 * zone's offset is a whole number of them): a ledger of a year's requests asks Intl a few
 * thousand times, not once per line.
 */
function createDayOf(timeZone?: string): (iso: string) => string | undefined {
  const days = new Map<number, string>();
  return (iso) => {
    const ms = Date.parse(iso);
    if (Number.isNaN(ms)) return undefined;
    const slot = Math.floor(ms / 900_000);
    let day = days.get(slot);
    if (day === undefined) {
      day = localParts(new Date(ms), timeZone).date;
      days.set(slot, day);
    }
    return day;
  };
}

/** `date` (`YYYY-MM-DD`) moved by `days` calendar days. */
export function addDays(date: string, days: number): string {
  const [y, m, d] = date.split("-").map(Number);
  return new Date(Date.UTC(y ?? 1970, (m ?? 1) - 1, (d ?? 1) + days)).toISOString().slice(0, 10);
}

/** A subagent's requests count toward its parent thread (`…~sub-<n>` is dropped). */
function threadKey(thread: string): string {
  const parent = thread.replace(/~sub-[0-9]+$/, "");
  try {
    return canonicalThreadId(parent);
  } catch {
    return parent;
  }
}

export type UsageGrouping = "day" | "thread" | "model";

export interface UsageReportOptions {
  home: string;
  /** The last `days` local days, today included. */
  days: number;
  by: UsageGrouping;
  /** GUPPY_TIMEZONE (absent: the system's). */
  timeZone?: string;
  now?: Date;
}

export interface UsageRow extends LedgerTotals {
  /** The day, thread or model. */
  key: string;
}

export interface UsageReport {
  /** The first local day counted and today. */
  from: string;
  to: string;
  by: UsageGrouping;
  /** Ordered by day (oldest first), else by cost then requests (largest first). */
  rows: UsageRow[];
  total: LedgerTotals;
  /** Unreadable lines (a writer killed mid-line). */
  skipped: number;
}

/** The ledger's totals over the last `days` days, by day, thread or model: one pass over the file. */
export function readUsageReport(options: UsageReportOptions): UsageReport {
  const to = localParts(options.now ?? new Date(), options.timeZone).date;
  const from = addDays(to, 1 - options.days);
  const dayOf = createDayOf(options.timeZone);
  const groups = new Map<string, LedgerTotals>();
  const total = emptyLedgerTotals();
  const folded = foldUsageLedger(join(options.home, USAGE_FILE), 0, (record) => {
    const day = dayOf(record.time);
    if (day === undefined || day < from || day > to) return;
    const key =
      options.by === "day" ? day : options.by === "model" ? record.model : threadKey(record.thread);
    let group = groups.get(key);
    if (!group) {
      group = emptyLedgerTotals();
      groups.set(key, group);
    }
    addRecord(group, record);
    addRecord(total, record);
  });
  const rows = [...groups].map(([key, totals]) => ({ key, ...totals }));
  rows.sort(
    options.by === "day"
      ? (a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)
      : (a, b) => b.cost - a.cost || b.requests - a.requests || (a.key < b.key ? -1 : 1),
  );
  return {
    from,
    to,
    by: options.by,
    rows,
    total,
    skipped: folded === "restart" ? 0 : folded.skipped,
  };
}

/** The ledger's running totals a gateway or chat reports (`/status`, `GET /v1/status`). */
export interface UsageTotalsReader {
  /** The thread's total across `/new` (its subagents' requests included) and today's. */
  threadUsage(threadId: string): ThreadUsage;
  /** Today's and this month's totals (local days). */
  recent(): { today: LedgerTotals; month: LedgerTotals };
}

/**
 * Totals of the ledger at `<home>/usage.jsonl`, by thread and by local day, brought up to date
 * at each question by reading only the lines appended since the last (any process's). The first
 * question reads the whole file once.
 */
export function createUsageTotals(options: {
  home: string;
  timeZone?: string;
  now?: () => Date;
}): UsageTotalsReader {
  const path = join(options.home, USAGE_FILE);
  const now = options.now ?? (() => new Date());
  const dayOf = createDayOf(options.timeZone);
  let offset = 0;
  let byThread = new Map<string, LedgerTotals>();
  let byDay = new Map<string, LedgerTotals>();
  const add = (map: Map<string, LedgerTotals>, key: string, record: UsageRecord) => {
    let totals = map.get(key);
    if (!totals) {
      totals = emptyLedgerTotals();
      map.set(key, totals);
    }
    addRecord(totals, record);
  };
  const refresh = () => {
    // Asked at every status (each HTTP request's thread lookup too): nothing new, nothing opened.
    if (sizeOf(path) === offset && offset > 0) return;
    const each = (record: UsageRecord) => {
      add(byThread, threadKey(record.thread), record);
      const day = dayOf(record.time);
      if (day !== undefined) add(byDay, day, record);
    };
    let folded = foldUsageLedger(path, offset, each);
    if (folded === "restart") {
      // Replaced or cut short (restored from a backup): counted again from the start.
      byThread = new Map();
      byDay = new Map();
      folded = foldUsageLedger(path, 0, each);
    }
    offset = folded === "restart" ? 0 : folded.end;
  };
  const today = () => localParts(now(), options.timeZone).date;
  const copy = (totals: LedgerTotals | undefined) => ({ ...(totals ?? emptyLedgerTotals()) });
  return {
    threadUsage(threadId) {
      refresh();
      return { thread: copy(byThread.get(threadKey(threadId))), today: copy(byDay.get(today())) };
    },
    recent() {
      refresh();
      const day = today();
      const month = emptyLedgerTotals();
      const prefix = day.slice(0, 8);
      for (const [key, totals] of byDay) if (key.startsWith(prefix)) addTotals(month, totals);
      return { today: copy(byDay.get(day)), month };
    },
  };
}

/** The file's size, or -1 when it cannot be read (missing): then it is read as usual. */
function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return -1;
  }
}
