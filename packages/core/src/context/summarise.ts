import type { AgentMessage, StreamFn } from "@mariozechner/pi-agent-core";
import type { Api, Model, Usage } from "@mariozechner/pi-ai";
import { excerptHeadTail } from "../tools/spill-output.js";
import { isCompactionMessage } from "./compaction-message.js";
import type { TokenCounter } from "./token-counter.js";

/** Marks the summariser's requests (tests and logs recognise them by it). */
export const SUMMARY_SYSTEM_PROMPT = `You are the context compactor of an AI agent called guppy. You receive part of a conversation between a user and the agent (with its tool calls and results), and possibly the summary of what came before it. Write an updated summary that lets the agent continue the work without the original messages.

Answer with exactly these sections, in this order, as Markdown, each with short bullet points ("- none" when empty):
## Goal
## Constraints
## Progress
## Decisions
## Open items
## Files touched

Keep names, paths, commands, numbers and error messages exact. Merge the earlier summary in: keep what still holds, drop what was superseded. Do not invent anything. Be brief.`;

const PER_MESSAGE_CHARS = 2_000;

export interface SummariseOptions {
  model: Model<Api>;
  stream: StreamFn;
  counter: TokenCounter;
  /** Messages to fold into the summary (oldest first; never a compaction message). */
  messages: readonly AgentMessage[];
  previousSummary?: string;
  /** Most tokens one summary request may carry. */
  maxInputTokens: number;
  /** Reply limit of a summary request. */
  maxOutputTokens: number;
  signal?: AbortSignal;
  /** Usage of each summary request (it costs like any other request). */
  onUsage?: (usage: Usage) => void;
}

export type SummaryResult = { ok: true; summary: string } | { ok: false; error: string };

/** Plain-text transcript of messages for the summariser; long contents are cut head+tail. */
export function transcript(messages: readonly AgentMessage[]): string[] {
  const out: string[] = [];
  for (const m of messages) {
    if (isCompactionMessage(m)) continue;
    const role = (m as { role: string }).role;
    const content = (m as { content?: unknown }).content;
    const parts: string[] = [];
    if (typeof content === "string") parts.push(content);
    else if (Array.isArray(content)) {
      for (const b of content as Array<Record<string, unknown>>) {
        if (b.type === "text") parts.push(String(b.text ?? ""));
        else if (b.type === "toolCall")
          parts.push(`[calls ${String(b.name)} ${JSON.stringify(b.arguments ?? {})}]`);
        else if (b.type === "image") parts.push("[image]");
      }
    }
    let text = parts.join("\n");
    if (text.length > PER_MESSAGE_CHARS) text = excerptHeadTail(text, PER_MESSAGE_CHARS);
    const label =
      role === "toolResult"
        ? `TOOL RESULT (${String((m as { toolName?: string }).toolName)}${(m as { isError?: boolean }).isError ? ", error" : ""})`
        : role.toUpperCase();
    out.push(`${label}: ${text}`);
  }
  return out;
}

/**
 * Folds `messages` into a structured summary with the LLM, updating `previousSummary`. When the
 * transcript is larger than one request may carry it goes in chunks, each updating the summary
 * of the one before. Never throws: a failed or empty answer is `{ ok: false }`.
 */
export async function summarise(o: SummariseOptions): Promise<SummaryResult> {
  const entries = transcript(o.messages);
  let summary = o.previousSummary;
  const fixed = o.counter.text(SUMMARY_SYSTEM_PROMPT) + 200;
  let i = 0;
  while (i < entries.length) {
    const room = o.maxInputTokens - fixed - (summary ? o.counter.text(summary) : 0);
    if (room < 200) return { ok: false, error: "the summary no longer fits a summary request" };
    const chunk: string[] = [];
    let used = 0;
    while (i < entries.length) {
      const t = o.counter.text(entries[i]!) + 4;
      if (chunk.length > 0 && used + t > room) break;
      chunk.push(t > room ? excerptHeadTail(entries[i]!, Math.max(200, room * 2)) : entries[i]!);
      used += t;
      i++;
    }
    const result = await requestSummary(o, chunk.join("\n\n"), summary);
    if (!result.ok) return result;
    summary = result.summary;
  }
  return summary ? { ok: true, summary } : { ok: false, error: "nothing to summarise" };
}

async function requestSummary(
  o: SummariseOptions,
  conversation: string,
  previous: string | undefined,
): Promise<SummaryResult> {
  const text = `${previous ? `<previous-summary>\n${previous}\n</previous-summary>\n\n` : ""}<conversation>\n${conversation}\n</conversation>\n\nWrite the updated summary now.`;
  try {
    const stream = await o.stream(
      o.model,
      {
        systemPrompt: SUMMARY_SYSTEM_PROMPT,
        messages: [{ role: "user", content: [{ type: "text", text }], timestamp: Date.now() }],
      },
      { maxTokens: o.maxOutputTokens, signal: o.signal },
    );
    const message = await stream.result();
    if (message.usage && message.usage.totalTokens > 0) o.onUsage?.(message.usage);
    if (message.stopReason === "error" || message.stopReason === "aborted") {
      return {
        ok: false,
        error: message.errorMessage ?? `the request ended: ${message.stopReason}`,
      };
    }
    const summary = message.content
      .filter((b): b is { type: "text"; text: string } => b.type === "text")
      .map((b) => b.text)
      .join("")
      .trim();
    if (summary === "") return { ok: false, error: "the model returned an empty summary" };
    return { ok: true, summary };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}
