// The context's own types: what a compaction leaves in the context and what it reports.
import type { CompactionInfo, CompactionMethod, CompactionReason, UsageTotals } from "../types.js";

/**
 * Stands in the context for everything a compaction removed: the LLM summary of it, or (when the
 * summary request failed) a note that whole oldest turns were dropped. It is always the first
 * message of a compacted context and reaches the model as a user message.
 */
export interface CompactionMessage {
  role: "compaction";
  method: CompactionMethod;
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
  reason: CompactionReason;
  /** Usage of everything no longer in the context, so totals and cost survive compaction. */
  usageCarried?: UsageTotals;
  timestamp: number;
}

export type CompactionOutcome =
  | { compacted: true; info: CompactionInfo; message: CompactionMessage }
  | { compacted: false; reason: string };
