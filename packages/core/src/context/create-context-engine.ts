import type { AgentMessage, StreamFn } from "@mariozechner/pi-agent-core";
import type { Api, Model, Tool, Usage } from "@mariozechner/pi-ai";
import { type Logger, silentLogger } from "../logging/logger.js";
import type { CompactionInfo, CompactionReason, ContextStats } from "../types.js";
import type { ContextBudget } from "./compaction.js";
import { chooseCut, compactionMessage, cutPoints, shrinkLongTexts } from "./compaction.js";
import { isCompactionMessage } from "./compaction-message.js";
import { summarise } from "./summarise.js";
import { createTokenCounter, type TokenCounter } from "./token-counter.js";
import type { CompactionMessage, CompactionOutcome } from "./types.js";

export interface ContextEngineOptions {
  model: Model<Api>;
  budget: ContextBudget;
  /** Stream function for summary requests (same provider, key and retries as the agent's). */
  stream: StreamFn;
  systemPrompt: () => string;
  tools: () => readonly Tool[];
  /**
   * Called when a compaction replaced the start of the context: the runner rewrites its state
   * and context.jsonl as [message, ...from `firstKept` on].
   */
  onCompacted: (message: CompactionMessage, firstKept: AgentMessage | undefined) => void;
  logger?: Logger;
  counter?: TokenCounter;
  /** Usage of summary requests, for the thread's totals. */
  onSummaryUsage?: (usage: Usage) => void;
}

export interface ContextEngine {
  readonly budget: ContextBudget;
  /** The transformContext hook: the messages to send, compacted or trimmed to fit. */
  prepare(messages: AgentMessage[], signal?: AbortSignal): Promise<AgentMessage[]>;
  /** Compacts now (/compact, or after a provider's "context too long"). */
  compact(
    messages: AgentMessage[],
    reason: CompactionReason,
    signal?: AbortSignal,
  ): Promise<CompactionOutcome>;
  /** Estimated tokens of sending `messages` (provider usage + local counts of what is newer). */
  estimate(messages: readonly AgentMessage[]): { tokens: number; fromUsage: boolean };
  /** The part of `messages` that is sent: from the latest compaction message on. */
  view(messages: readonly AgentMessage[]): AgentMessage[];
  stats(messages: readonly AgentMessage[]): ContextStats;
  /** Forgets the last request's figures and the compaction anchor (/new). */
  reset(): void;
  /**
   * After a provider's "context too long": the provider counts more than we do, so every limit
   * shrinks by 20% (down to half) for the rest of this runner's life.
   */
  tighten(): void;
}

// Long by design: one closure per thread runner whose methods share the budget, anchor and counts.
export function createContextEngine(options: ContextEngineOptions): ContextEngine {
  const { model } = options;
  const full = options.budget;
  let budget = full;
  const logger = options.logger ?? silentLogger;
  const counter = options.counter ?? createTokenCounter();
  let anchor: { summary: CompactionMessage; firstKept: AgentMessage | undefined } | undefined;
  /** The last request's figures; `bound`: counted before the BPE was loaded (a byte bound). */
  let last: { tokens: number; fromUsage: boolean; bound: boolean; messages: number } | undefined;
  /** Set while what is sent is a shortened copy: usage reported since then is not the stored context's. */
  let shrunkSince: number | undefined;

  const fixedTokens = () => counter.system(options.systemPrompt()) + counter.tools(options.tools());

  const view = (messages: readonly AgentMessage[]): AgentMessage[] => {
    if (anchor) {
      const s = messages.lastIndexOf(anchor.summary);
      if (s === -1) {
        const k = anchor.firstKept ? messages.lastIndexOf(anchor.firstKept) : -1;
        if (k !== -1) return [anchor.summary, ...messages.slice(k)];
      }
    }
    const at = latestCompaction(messages);
    return at === -1 ? (messages as AgentMessage[]) : messages.slice(at);
  };

  /**
   * Where the latest compaction message is (-1: none). The messages only grow between
   * compactions, so when the first and the last one seen before are still where they were (the
   * same objects), only what follows is scanned. A compaction or reset() forgets it.
   */
  let scanned: { length: number; first: AgentMessage; last: AgentMessage; at: number } | undefined;
  const latestCompaction = (messages: readonly AgentMessage[]): number => {
    let from = 0;
    let at = -1;
    if (scanned && messages[0] === scanned.first && messages[scanned.length - 1] === scanned.last) {
      from = scanned.length;
      at = scanned.at;
    }
    for (let i = messages.length - 1; i >= from; i--) {
      if (isCompactionMessage(messages[i])) {
        at = i;
        break;
      }
    }
    const first = messages[0];
    const last = messages[messages.length - 1];
    scanned = first && last ? { length: messages.length, first, last, at } : undefined;
    return at;
  };

  const localTotal = (v: readonly AgentMessage[], from = 0) => {
    let n = 0;
    for (let i = from; i < v.length; i++) n += counter.message(v[i]!);
    return n;
  };

  const estimate = (v: readonly AgentMessage[]) => {
    const since = isCompactionMessage(v[0]) ? v[0].timestamp : -Infinity;
    for (let i = v.length - 1; i >= 0; i--) {
      const m = v[i]!;
      if ((m as { role: string }).role !== "assistant") continue;
      const a = m as Extract<AgentMessage, { role: "assistant" }>;
      if (a.stopReason === "error" || a.stopReason === "aborted") continue;
      const shortened = shrunkSince !== undefined && a.timestamp >= shrunkSince;
      if (a.usage && a.usage.totalTokens > 0 && a.timestamp >= since && !shortened) {
        const u = a.usage;
        return {
          tokens: u.input + u.cacheRead + u.cacheWrite + u.output + localTotal(v, i + 1),
          fromUsage: true,
          bound: false,
        };
      }
      break;
    }
    return { tokens: fixedTokens() + localTotal(v), fromUsage: false, bound: !counter.loaded };
  };

  /** Estimate, loading the exact tokenizer only when the cheap byte bound comes near the threshold. */
  const estimateCarefully = async (v: readonly AgentMessage[]) => {
    let e = estimate(v);
    if (!counter.loaded && e.tokens > budget.compactAt * 0.8) {
      await counter.load();
      e = estimate(v);
    }
    return e;
  };

  const apply = (
    previous: CompactionMessage | undefined,
    rest: readonly AgentMessage[],
    cut: number,
    method: CompactionMessage["method"],
    reason: CompactionReason,
    summary: string,
    tokensBefore: number,
    error?: string,
    extraUsage: readonly Usage[] = [],
  ): CompactionOutcome => {
    const message = compactionMessage(
      previous,
      rest,
      cut,
      method,
      reason,
      summary,
      tokensBefore,
      extraUsage,
    );
    const kept = rest.slice(cut);
    message.tokensAfter = fixedTokens() + counter.message(message) + localTotal(kept);
    anchor = { summary: message, firstKept: kept[0] };
    shrunkSince = undefined;
    scanned = undefined;
    last = undefined; // the next stats() estimates the compacted context
    options.onCompacted(message, kept[0]);
    const info: CompactionInfo = {
      method,
      reason,
      removedMessages: cut,
      tokensBefore,
      tokensAfter: message.tokensAfter,
      at: message.timestamp,
      ...(error ? { error } : {}),
    };
    return { compacted: true, info, message };
  };

  const split = (v: readonly AgentMessage[]) => {
    const previous = isCompactionMessage(v[0]) ? v[0] : undefined;
    return { previous, rest: previous ? v.slice(1) : v.slice() };
  };

  const compact = async (
    messages: AgentMessage[],
    reason: CompactionReason,
    signal?: AbortSignal,
  ): Promise<CompactionOutcome> => {
    await counter.load();
    const v = view(messages);
    const before = estimate(v).tokens;
    const { previous, rest } = split(v);
    const tokens = rest.map((m) => counter.message(m));
    // Keep half of the room below the threshold, so a compaction leaves space for turns to come;
    // after a provider's "too long", at most half of what is there.
    const room = Math.max(0, budget.compactAt - fixedTokens());
    const keepable = Math.min(budget.keepRecent, Math.floor(room / 2));
    const keep =
      reason === "overflow"
        ? Math.min(keepable, Math.floor(tokens.reduce((a, b) => a + b, 0) / 2))
        : keepable;
    const cut = chooseCut(rest, tokens, keep);
    if (cut === 0)
      return {
        compacted: false,
        reason: "the conversation fits, and its recent messages are kept word for word",
      };
    const summaryUsage: Usage[] = [];
    const result = await summarise({
      model,
      stream: options.stream,
      counter,
      messages: rest.slice(0, cut),
      previousSummary: previous?.summary,
      maxInputTokens: budget.input,
      maxOutputTokens: Math.max(256, Math.min(budget.reply || 2048, 4096)),
      signal,
      onUsage: (u) => {
        summaryUsage.push(u);
        options.onSummaryUsage?.(u);
      },
    });
    if (result.ok) {
      const outcome = apply(
        previous,
        rest,
        cut,
        "summary",
        reason,
        result.summary,
        before,
        undefined,
        summaryUsage,
      );
      logger.info(
        `Compacted the context (${reason}): ${cut} messages summarised, ~${before} → ~${outcome.compacted ? outcome.info.tokensAfter : before} tokens`,
      );
      return outcome;
    }
    if (signal?.aborted) return { compacted: false, reason: "stopped" };
    const outcome = apply(
      previous,
      rest,
      cut,
      "dropped",
      reason,
      previous?.summary ?? "",
      before,
      result.error,
      summaryUsage,
    );
    logger.warn(
      `The compaction summary failed (${result.error}); dropped the ${cut} oldest messages instead`,
    );
    return outcome;
  };

  /** Drops whole oldest turns until the view fits the input budget. */
  const dropToFit = (v: AgentMessage[], tokensBefore: number): AgentMessage[] => {
    const { previous, rest } = split(v);
    const valid = cutPoints(rest);
    const tokens = rest.map((m) => counter.message(m));
    const fixed = fixedTokens() + (previous ? counter.message(previous) : 0) + 50;
    let suffix = tokens.reduce((a, b) => a + b, 0);
    let cut = 0;
    for (let i = 1; i < rest.length; i++) {
      suffix -= tokens[i - 1]!;
      if (!valid[i]) continue;
      cut = i;
      if (fixed + suffix <= budget.input) break;
    }
    if (cut === 0) return v;
    const outcome = apply(
      previous,
      rest,
      cut,
      "dropped",
      "threshold",
      previous?.summary ?? "",
      tokensBefore,
      "over the input budget after compaction",
    );
    logger.warn(`The context was over budget; dropped the ${cut} oldest messages`);
    return outcome.compacted ? [outcome.message, ...rest.slice(cut)] : v;
  };

  // `budget` is a data property updated by tighten(), not a getter (a getter makes V8 use a
  // slower dictionary-mode object).
  const engine: ContextEngine = {
    budget,
    view,
    estimate,

    async prepare(messages, signal) {
      let v = view(messages);
      let e = await estimateCarefully(v);
      if (e.tokens > budget.compactAt) {
        const outcome = await compact(messages, "threshold", signal);
        if (signal?.aborted) return v; // the request is cancelled anyway; change nothing
        if (outcome.compacted) {
          v = view(messages);
          e = estimate(v);
        }
      }
      if (e.tokens > budget.input) {
        await counter.load();
        v = dropToFit(v, e.tokens);
        e = estimate(v);
      }
      if (e.tokens > budget.input) {
        // Last resort: what is left is one turn too big to send; shorten its longest texts in
        // what is sent (the stored messages keep them).
        shrunkSince ??= Date.now();
        v = shrinkLongTexts(v, budget.input, counter, fixedTokens());
        e = { tokens: fixedTokens() + localTotal(v), fromUsage: false, bound: !counter.loaded };
        logger.warn("The current turn alone exceeds the context window; long texts were cut");
      }
      if (e.tokens > budget.input) {
        throw new Error(
          `The context (~${e.tokens} tokens) cannot fit the ${budget.window}-token window even after compaction; start a new conversation (/new).`,
        );
      }
      last = { tokens: e.tokens, fromUsage: e.fromUsage, bound: e.bound, messages: v.length };
      return v;
    },

    compact,

    reset() {
      anchor = undefined;
      last = undefined;
      scanned = undefined;
    },

    tighten() {
      const scale = Math.max(0.5, budget.input / full.input - 0.2);
      budget = {
        ...full,
        input: Math.floor(full.input * scale),
        compactAt: Math.floor(full.compactAt * scale),
        keepRecent: Math.floor(full.keepRecent * scale),
      };
      (engine as { budget: ContextBudget }).budget = budget;
      logger.warn(
        `Tightened the context budget to ${budget.input} tokens (the provider counts more than the local tokenizer)`,
      );
    },

    stats(messages) {
      const v = view(messages);
      const head = isCompactionMessage(v[0]) ? v[0] : undefined;
      let current = last ?? { ...estimate(v), messages: v.length };
      if (current.bound) {
        // Display only: a count made before the tokenizer was loaded is a byte bound; show ~4
        // bytes per token. Load it before any request, never after one (it costs every run).
        if (!last) void counter.load();
        current = { ...current, tokens: Math.ceil(current.tokens / 4) };
      }
      return {
        tokens: current.tokens,
        fromUsage: current.fromUsage,
        window: budget.window,
        inputBudget: budget.input,
        compactAt: budget.compactAt,
        messages: v.length,
        compactions: head?.compactions ?? 0,
        fallbacks: head?.fallbacks ?? 0,
        ...(head
          ? {
              lastCompaction: {
                method: head.method,
                reason: head.reason,
                removedMessages: head.removedMessages,
                tokensBefore: head.tokensBefore,
                tokensAfter: head.tokensAfter,
                at: head.timestamp,
              },
            }
          : {}),
      };
    },
  };
  return engine;
}
