import type { Usage } from "@mariozechner/pi-ai";
import type { CompactionMessage } from "../context/compaction-message.js";
import type { ContextStats } from "../context/create-context-engine.js";

/** Why a run ended. */
export type RunStopReason = "stop" | "length" | "aborted" | "error" | "max_tool_rounds";

/** What the runner reports while it works; UIs subscribe to these and know nothing else of the agent. */
export type RunnerEvent =
  | { type: "run_start"; threadId: string; text: string }
  /** A request to the model is under way (spinner on). */
  | { type: "thinking_start" }
  /** The model started answering, or the request ended (spinner off). */
  | { type: "thinking_end" }
  | { type: "text_delta"; delta: string }
  | { type: "tool_call"; toolCallId: string; name: string; args: unknown }
  | { type: "tool_result"; toolCallId: string; name: string; isError: boolean; text: string }
  | { type: "usage"; usage: Usage; totals: UsageTotals }
  /** Before each request: what it carries (tokens / window, messages, compactions so far). */
  | { type: "context"; stats: ContextStats }
  /** The context was compacted ("dropped": the summary failed and whole oldest turns went). */
  | {
      type: "compaction";
      method: CompactionMessage["method"];
      reason: CompactionMessage["reason"];
      removedMessages: number;
      tokensBefore: number;
      tokensAfter: number;
    }
  | { type: "error"; kind: "provider" | "tool_rounds" | "internal"; message: string }
  | { type: "run_end"; text: string; stopReason: RunStopReason; errorMessage?: string };

export type RunnerEventListener = (event: RunnerEvent) => void;

/** Sums over a thread's assistant messages. */
export interface UsageTotals {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  cost: number;
  requests: number;
}

export function emptyTotals(): UsageTotals {
  return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: 0, requests: 0 };
}

export function addUsage(totals: UsageTotals, usage: Usage): UsageTotals {
  return {
    input: totals.input + usage.input,
    output: totals.output + usage.output,
    cacheRead: totals.cacheRead + usage.cacheRead,
    cacheWrite: totals.cacheWrite + usage.cacheWrite,
    cost: totals.cost + (usage.cost?.total ?? 0),
    requests: totals.requests + 1,
  };
}
