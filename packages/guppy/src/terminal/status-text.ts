import { type AgentRunner, describeCompaction } from "@guppy/core";

const n = (x: number) => Math.round(x).toLocaleString("en-US");

/** The /status report: model, context (tokens of the window, messages, compactions), last request, totals. */
export function statusText(runner: AgentRunner, modelRef: string): string {
  const stats = runner.stats();
  const ctx = stats.context;
  const pct = ctx.window > 0 ? ((ctx.tokens / ctx.window) * 100).toFixed(1) : "?";
  const u = stats.lastUsage;
  const last = ctx.lastCompaction;
  const compactions =
    ctx.compactions === 0
      ? "none"
      : `${ctx.compactions}${ctx.fallbacks > 0 ? ` (${ctx.fallbacks} fell back to dropping old turns: the summary request failed)` : ""}`;
  const lines = [
    `model        ${modelRef}`,
    `thread       ${runner.threadId}`,
    `messages     ${stats.messages}`,
    `context      ${n(ctx.tokens)} / ${n(ctx.window)} tokens (${pct}%); compacts at ${n(ctx.compactAt)}`,
    `compactions  ${compactions}`,
  ];
  if (last) {
    lines.push(
      `last         ${last.method === "summary" ? "summarised" : "dropped"} ${last.removedMessages} messages (${last.reason}), ~${n(last.tokensBefore)} → ~${n(last.tokensAfter)} tokens`,
    );
  }
  lines.push(
    u
      ? `last request ${n(u.input)} in, ${n(u.cacheRead)} cached read, ${n(u.cacheWrite)} cache write, ${n(u.output)} out, $${(u.cost?.total ?? 0).toFixed(4)}`
      : "last request none yet",
    `usage        ${stats.totals.requests} requests, ${n(stats.totals.input)} in / ${n(stats.totals.output)} out, ${n(stats.totals.cacheRead)} cached`,
    `cost         $${stats.totals.cost.toFixed(4)}`,
  );
  return lines.join("\n");
}

/** Runs /compact and says what happened in one line. */
export async function compactText(runner: AgentRunner): Promise<string> {
  return describeCompaction(await runner.compact());
}
