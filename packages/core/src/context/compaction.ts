import type { AgentMessage } from "@mariozechner/pi-agent-core";
import { type AssistantMessage, isContextOverflow, type Usage } from "@mariozechner/pi-ai";
import { integerValue } from "../config/setting-parsers.js";
import type { SettingDefinitions, SettingValues } from "../config/settings-schema.js";
import { excerptHeadTail } from "../tools/spill-output.js";
import type { CompactionReason } from "../types.js";
import type { TokenCounter } from "./token-counter.js";
import type { CompactionMessage } from "./types.js";
import { addUsage, emptyTotals } from "./usage-totals.js";

// Making a context fit: where it may be cut, the message a compaction leaves, and the last
// resorts (long texts shortened) and signs (a provider's "too long") around it.

type Role = "user" | "assistant" | "toolResult" | string;
const roleOf = (m: AgentMessage): Role => (m as { role: string }).role;

function callIds(m: AgentMessage): string[] {
  if (roleOf(m) !== "assistant") return [];
  const content = (m as { content?: unknown }).content;
  if (!Array.isArray(content)) return [];
  return content
    .filter((b): b is { type: "toolCall"; id: string } => b?.type === "toolCall")
    .map((b) => b.id);
}

/**
 * Indices where the history may be cut: everything before index i can be removed without
 * separating a tool call from its results or leaving a result without its call. A cut point
 * starts a user message or an assistant message (never a tool result) and no call made before
 * it is answered after it. Index 0 and `messages.length` are always valid.
 */
export function cutPoints(messages: readonly AgentMessage[]): boolean[] {
  const valid = new Array<boolean>(messages.length + 1).fill(false);
  valid[0] = true;
  valid[messages.length] = true;
  // Calls made so far whose results have not been seen yet.
  const open = new Set<string>();
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    const role = roleOf(m);
    if (i > 0 && role !== "toolResult" && open.size === 0) valid[i] = true;
    if (role === "user") open.clear(); // an unanswered call before a user turn is an orphan anyway
    if (role === "assistant") {
      open.clear();
      for (const id of callIds(m)) open.add(id);
    }
    if (role === "toolResult") open.delete((m as { toolCallId: string }).toolCallId);
  }
  // Conservative: an index right after calls still waiting for results is never a cut point,
  // even when the results never come (`repairPairing` deals with those).
  return valid;
}

/**
 * The cut for a compaction: the earliest valid index whose suffix fits in `keepTokens`, so the
 * most recent messages are kept verbatim; if even the last group is larger, the latest valid
 * index before the end (the smallest possible suffix). Returns 0 when nothing can be removed.
 */
export function chooseCut(
  messages: readonly AgentMessage[],
  tokens: readonly number[],
  keepTokens: number,
): number {
  const n = messages.length;
  if (n === 0) return 0;
  const valid = cutPoints(messages);
  let suffix = 0;
  let best = -1;
  let latest = -1;
  for (let i = n - 1; i >= 1; i--) {
    suffix += tokens[i] ?? 0;
    if (!valid[i]) continue;
    if (latest === -1) latest = i;
    if (suffix <= keepTokens) best = i;
    else break;
  }
  if (best !== -1) return best;
  return latest === -1 ? 0 : latest;
}

/**
 * The compaction message that replaces `rest.slice(0, cut)`: it carries the usage of what it
 * removes and counts compactions and fallbacks; `tokensAfter` is left for the caller to count.
 */
export function compactionMessage(
  previous: CompactionMessage | undefined,
  rest: readonly AgentMessage[],
  cut: number,
  method: CompactionMessage["method"],
  reason: CompactionReason,
  summary: string,
  tokensBefore: number,
  extraUsage: readonly Usage[],
): CompactionMessage {
  const compactions = (previous?.compactions ?? 0) + 1;
  let usageCarried = previous?.usageCarried ?? emptyTotals();
  for (const m of rest.slice(0, cut)) {
    const u = (m as { role: string; usage?: Usage }).usage;
    if ((m as { role: string }).role === "assistant" && u) usageCarried = addUsage(usageCarried, u);
  }
  for (const u of extraUsage) usageCarried = addUsage(usageCarried, u);
  const fallbacks = (previous?.fallbacks ?? 0) + (method === "dropped" ? 1 : 0);
  const message: CompactionMessage = {
    role: "compaction",
    method,
    summary,
    removedMessages: cut,
    tokensBefore,
    tokensAfter: 0,
    compactions,
    fallbacks,
    reason,
    usageCarried,
    timestamp: Date.now(),
  };
  return message;
}

/** Shortens the longest texts of `v` (a copy) so that it fits `input` tokens with `fixed` more. */
export function shrinkLongTexts(
  v: AgentMessage[],
  input: number,
  counter: TokenCounter,
  fixed: number,
): AgentMessage[] {
  const total = fixed + v.reduce((n, m) => n + counter.message(m), 0);
  const over = total - input;
  if (over <= 0) return v;
  const isLong = (b: { type: string; text?: string }) =>
    b.type === "text" && typeof b.text === "string" && b.text.length >= 2_000;
  let longTokens = 0;
  for (const m of v) {
    const content = (m as { content?: unknown }).content;
    if (!Array.isArray(content)) continue;
    for (const b of content as Array<{ type: string; text?: string }>)
      if (isLong(b)) longTokens += counter.text(b.text ?? "");
  }
  if (longTokens === 0) return v;
  // Every long text keeps the same share of itself, so that together they lose what must go.
  const ratio = Math.max(0, (longTokens - over - 300) / longTokens);
  return v.map((m) => {
    const content = (m as { content?: unknown }).content;
    if (!Array.isArray(content)) return m;
    let changed = false;
    const next = (content as Array<{ type: string; text?: string }>).map((b) => {
      if (!isLong(b)) return b;
      changed = true;
      return {
        ...b,
        text: excerptHeadTail(
          b.text ?? "",
          Math.max(400, Math.floor((b.text ?? "").length * ratio)),
        ),
      };
    });
    return changed ? ({ ...m, content: next } as AgentMessage) : m;
  });
}

/** A provider's "context too long" answer (pi-ai's patterns for ~20 providers, plus a few generic ones). */
export function isOverflowError(m: AgentMessage | undefined): m is AssistantMessage {
  if (!m || (m as { role: string }).role !== "assistant") return false;
  const a = m as AssistantMessage;
  if (a.stopReason !== "error") return false;
  if (isContextOverflow(a)) return true;
  return /context[ _-]?(length|window)|too long|too many tokens/i.test(a.errorMessage ?? "");
}

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

/** When compaction starts and what it keeps. */
export const contextSettings = {
  compactReserveTokens: {
    env: "GUPPY_COMPACT_RESERVE_TOKENS",
    parse: integerValue(0),
    default: 16_384,
    description: "Compaction starts when context passes window minus this many tokens",
  },
  compactKeepRecentTokens: {
    env: "GUPPY_COMPACT_KEEP_TOKENS",
    parse: integerValue(0),
    default: 20_000,
    description: "Most recent tokens kept verbatim by a compaction",
  },
} satisfies SettingDefinitions;

export type ContextSettingValues = SettingValues<typeof contextSettings>;
