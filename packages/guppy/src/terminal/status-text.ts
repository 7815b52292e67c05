import type { AgentRunner } from "@guppy/core";

/** The /status report: model, messages, context tokens of the window, cost so far. */
export function statusText(runner: AgentRunner, modelRef: string): string {
  const stats = runner.stats();
  const u = stats.lastUsage;
  const inContext = u ? u.input + u.cacheRead + u.cacheWrite + u.output : 0;
  const window = runner.model.contextWindow;
  const pct = window > 0 ? ((inContext / window) * 100).toFixed(1) : "?";
  return [
    `model     ${modelRef}`,
    `thread    ${runner.threadId}`,
    `messages  ${stats.messages}`,
    `context   ${inContext.toLocaleString("en-US")} / ${window.toLocaleString("en-US")} tokens (${pct}%)`,
    `usage     ${stats.totals.requests} requests, ${stats.totals.input.toLocaleString("en-US")} in / ${stats.totals.output.toLocaleString("en-US")} out, ${stats.totals.cacheRead.toLocaleString("en-US")} cached`,
    `cost      $${stats.totals.cost.toFixed(4)}`,
  ].join("\n");
}
