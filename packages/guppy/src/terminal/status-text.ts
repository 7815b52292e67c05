import type { ThreadEventInfo, ThreadStatus } from "@guppy/core";

const n = (x: number) => Math.round(x).toLocaleString("en-US");

const compactions = ({ compactions: count, compactionFallbacks: fell = 0 }: ThreadStatus) =>
  count === 0
    ? "none"
    : `${count}${fell > 0 ? ` (${fell} fell back to dropping old turns: the summary request failed)` : ""}`;

/**
 * The /status report: model, thread, messages, context (tokens of the window), last request, cost,
 * and where the tools run (when the orchestrator was told).
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
    `messages     ${status.messages}`,
    `context      ${n(status.contextTokens)} / ${n(status.contextWindow)} tokens (${pct}%)`,
    `compactions  ${compactions(status)}`,
    u
      ? `last request ${n(u.input)} in, ${n(u.cacheRead)} cached read, ${n(u.cacheWrite)} cache write, ${n(u.output)} out, $${(u.cost?.total ?? 0).toFixed(4)}`
      : "last request none yet",
    `cost         $${status.cost.toFixed(4)}`,
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

/** A scheduled event in one line: `remind  one-shot 2026-12-01T09:00:00  next 2026-12-01T08:00:00.000Z`. */
export function eventLine(e: ThreadEventInfo): string {
  return `${e.id}  ${e.type}${e.schedule ? ` ${e.schedule}` : ""}${e.nextRun ? `  next ${e.nextRun}` : ""}`;
}
