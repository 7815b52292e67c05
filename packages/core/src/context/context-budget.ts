/** How a context window is shared out. All figures are tokens. */
export interface ContextBudget {
  window: number;
  /** Reserved for the reply (GUPPY_MAX_TOKENS). */
  reply: number;
  /** Headroom for the local count being off from the provider's tokenizer. */
  safety: number;
  /** The most a request may carry: window − reply − safety. A larger request is never sent. */
  input: number;
  /** Compaction starts when the context passes this (window − GUPPY_COMPACT_RESERVE_TOKENS). */
  compactAt: number;
  /** Tokens of recent messages a compaction keeps verbatim. */
  keepRecent: number;
}

export interface BudgetSettings {
  contextWindow: number;
  maxTokens: number;
  reserveTokens: number;
  keepRecentTokens: number;
}

/**
 * The input budget is window − reply − a safety margin (3% of the window, at least 256).
 * The compaction threshold is window − reserve, but never above the input budget and never
 * below 60% of it (a reserve larger than a small window would otherwise compact on every
 * turn); what is kept verbatim is at most half of the threshold, so a compaction always frees
 * room.
 */
export function computeBudget(s: BudgetSettings): ContextBudget {
  const window = Math.max(1, Math.floor(s.contextWindow));
  const reply = Math.max(0, Math.min(Math.floor(s.maxTokens), Math.floor(window / 2)));
  const safety = Math.max(256, Math.ceil(window * 0.03));
  const input = Math.max(1, window - reply - safety);
  const byReserve = window - s.reserveTokens;
  const compactAt = Math.min(input, Math.max(Math.floor(input * 0.6), byReserve));
  const keepRecent = Math.max(0, Math.min(s.keepRecentTokens, Math.floor(compactAt * 0.5)));
  return { window, reply, safety, input, compactAt, keepRecent };
}
