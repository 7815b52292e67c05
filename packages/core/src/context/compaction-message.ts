import type { AgentMessage } from "@mariozechner/pi-agent-core";
import type { UserMessage } from "@mariozechner/pi-ai";
import type { UsageTotals } from "../runner/runner-events.js";

/**
 * Stands in the context for everything a compaction removed: the LLM summary of it, or (when the
 * summary request failed) a note that whole oldest turns were dropped. It is always the first
 * message of a compacted context and reaches the model as a user message.
 */
export interface CompactionMessage {
  role: "compaction";
  /** "summary": an LLM summary replaced the older part; "dropped": the fallback dropped whole turns. */
  method: "summary" | "dropped";
  /** The structured summary (for "dropped", the earlier summary if there was one). */
  summary: string;
  /** Messages removed by this compaction. */
  removedMessages: number;
  /** Estimated context tokens before and after. */
  tokensBefore: number;
  tokensAfter: number;
  /** Compactions of this thread so far, this one included. */
  compactions: number;
  /** Of which fell back to dropping turns. */
  fallbacks: number;
  /** Why it ran: over the threshold, forced by /compact, or a provider's "context too long". */
  reason: CompactionReason;
  /**
   * Usage of everything no longer in the context (removed replies and the summary requests),
   * so the thread's totals and cost survive compaction and restarts.
   */
  usageCarried?: UsageTotals;
  timestamp: number;
}

export type CompactionReason = "threshold" | "manual" | "overflow";

declare module "@mariozechner/pi-agent-core" {
  interface CustomAgentMessages {
    compaction: CompactionMessage;
  }
}

export function isCompactionMessage(m: AgentMessage | undefined): m is CompactionMessage {
  return m !== undefined && (m as { role: string }).role === "compaction";
}

/** What the model sees in place of a compaction message. */
export function compactionToUser(m: CompactionMessage): UserMessage {
  const head =
    m.method === "summary"
      ? "[Summary of the earlier conversation, written when the context was compacted. Treat it as what happened before the messages that follow.]"
      : `[Earlier messages were dropped to fit the context window (${m.removedMessages} in the last drop; the summary request failed).${
          m.summary ? " The summary from before the drop follows." : ""
        }]`;
  return {
    role: "user",
    content: [{ type: "text", text: m.summary ? `${head}\n\n${m.summary}` : head }],
    timestamp: m.timestamp,
  };
}
