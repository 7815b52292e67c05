import type { LedgerTotals, ThreadEventInfo, ThreadStatus } from "@guppy/core";

const n = (x: number) => Math.round(x).toLocaleString("en-US");

const compactions = ({ compactions: count, compactionFallbacks: fell = 0 }: ThreadStatus) =>
  count === 0
    ? "none"
    : `${count}${fell > 0 ? ` (${fell} fell back to dropping old turns: the summary request failed)` : ""}`;

/**
 * The /status report: model, thread, messages, context (tokens of the window), last request, cost,
 * the usage ledger's totals (the thread's across /new, today's) and where the tools run (when the
 * orchestrator was told).
 */
export function statusText(status: ThreadStatus): string {
  const pct =
    status.contextWindow > 0
      ? ((status.contextTokens / status.contextWindow) * 100).toFixed(1)
      : "?";
  const u = status.lastUsage;
  const lines = [
    `model        ${status.model}`,
    `thread       ${status.threadId}`,
    `state        ${status.state}${status.queued > 0 ? `, ${status.queued} queued` : ""}`,
    `last active  ${lastActivityText(status.lastActivity)}`,
    `messages     ${status.messages}`,
    `context      ${n(status.contextTokens)} / ${n(status.contextWindow)} tokens (${pct}%)`,
    `compactions  ${compactions(status)}`,
    u
      ? `last request ${n(u.input)} in, ${n(u.cacheRead)} cached read, ${n(u.cacheWrite)} cache write, ${n(u.output)} out, $${(u.cost?.total ?? 0).toFixed(4)}`
      : "last request none yet",
    `cost         $${status.cost.toFixed(4)}`,
    ...(status.usage
      ? [
          `thread total ${totalsText(status.usage.thread)} (across /new)`,
          `today        ${totalsText(status.usage.today)} (all threads)`,
        ]
      : []),
    ...(status.sandbox ? [`sandbox      ${status.sandbox}`] : []),
    ...(status.subagents ?? []).map(
      (c, i) =>
        `${i === 0 ? "subagents    " : "             "}${c.id}${c.label ? ` "${c.label}"` : ""}: ${c.state}`,
    ),
    ...(status.events ?? []).map(
      (e, i) => `${i === 0 ? "events      " : "            "} ${eventLine(e)}`,
    ),
  ];
  return lines.join("\n");
}

/**
 * When the thread last had a message or a run: `2026-11-27 15:04 UTC (12 min ago)`, or "never"
 * (no message since its files were made). `now` for tests.
 */
export function lastActivityText(iso: string | undefined, now = Date.now()): string {
  if (!iso) return "never";
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return iso;
  const minutes = Math.max(0, Math.floor((now - at) / 60_000));
  const ago =
    minutes < 1
      ? "just now"
      : minutes < 120
        ? `${minutes} min ago`
        : minutes < 48 * 60
          ? `${Math.floor(minutes / 60)} h ago`
          : `${Math.floor(minutes / (24 * 60))} days ago`;
  return `${new Date(at).toISOString().slice(0, 16).replace("T", " ")} UTC (${ago})`;
}

/** A scheduled event in one line: `remind  one-shot 2026-12-01T09:00:00  next 2026-12-01T08:00:00.000Z`. */
export function eventLine(e: ThreadEventInfo): string {
  return `${e.id}  ${e.type}${e.schedule ? ` ${e.schedule}` : ""}${e.nextRun ? `  next ${e.nextRun}` : ""}`;
}

/**
 * Dollars of ledger totals: "subscription" when every request went through a subscription's
 * sign-in (it spends nothing per token: not "$0"), "$1.2345 + subscription" when some did.
 */
export function costText(t: LedgerTotals): string {
  if (t.subscription > 0 && t.subscription === t.requests) return "subscription";
  const dollars = `$${t.cost.toFixed(4)}`;
  return t.subscription > 0 ? `${dollars} + subscription` : dollars;
}

/** `3 requests, 1,234 in, 512 cached read, 0 cache write, 89 out, $0.0123`. */
export function totalsText(t: LedgerTotals): string {
  return `${n(t.requests)} request${t.requests === 1 ? "" : "s"}, ${n(t.input)} in, ${n(t.cacheRead)} cached read, ${n(t.cacheWrite)} cache write, ${n(t.output)} out, ${costText(t)}`;
}
