import type { AgentMessage } from "@mariozechner/pi-agent-core";
import type { AssistantMessage, Message, ToolCall, ToolResultMessage } from "@mariozechner/pi-ai";
import { isLlmMessage } from "../runner/message-text.js";
import { compactionToUser, isCompactionMessage } from "./compaction-message.js";

/**
 * The agent's `convertToLlm`: the stored messages as the provider gets them (a compaction
 * summary becomes a user message, other custom messages are left out), pairing-repaired.
 *
 * Between compactions a request extends the previous one, so the previous conversion is kept:
 * when the messages it was made from are still the first ones (the same objects), only the
 * messages after them are converted and checked. Anything else — a compaction, /new, an
 * overflow retry, a repaired (so not valid) previous request — converts from scratch.
 */
export function createLlmMessages(onFixes: (fixes: string[]) => void) {
  let previous: { from: AgentMessage[]; llm: Message[] } | undefined;

  const extends_ = (messages: readonly AgentMessage[], from: readonly AgentMessage[]) => {
    if (messages.length < from.length) return false;
    for (let i = from.length - 1; i >= 0; i--) if (messages[i] !== from[i]) return false;
    return true;
  };

  return (messages: AgentMessage[]): Message[] => {
    const reuse = previous !== undefined && extends_(messages, previous.from);
    const llm: Message[] = reuse && previous ? previous.llm.slice() : [];
    const validUpTo = llm.length;
    for (let i = reuse && previous ? previous.from.length : 0; i < messages.length; i++) {
      const m = messages[i]!;
      if (isCompactionMessage(m)) llm.push(compactionToUser(m));
      else if (isLlmMessage(m)) llm.push(m);
    }
    const repaired = repairPairing(llm, validUpTo);
    if (repaired.fixes.length > 0) onFixes(repaired.fixes);
    // Only a request that needed no repair is a valid prefix for the next one.
    previous = repaired.messages === llm ? { from: messages.slice(), llm } : undefined;
    return repaired.messages;
  };
}

export interface PairingRepair {
  messages: Message[];
  /** What was fixed (empty when the input was already valid). */
  fixes: string[];
}

const missingResult = "(no result was recorded for this call: it was interrupted)";

/**
 * The last pass before every request: makes the sequence valid for both wire protocols
 * (OpenAI chat `tool_calls` → `tool` messages, Anthropic `tool_use` → `tool_result` blocks).
 * - every tool call of an assistant message is answered by exactly one result, right after it
 *   and in call order (a missing one gets an error result saying it was interrupted);
 * - results with no call right before them, and duplicates, are dropped;
 * - errored/aborted assistant messages are left out (the providers skip them too), so results
 *   pointing at them are orphans and go as well;
 * - the sequence starts with a user message.
 * A valid input comes back as the same array (no copy), so the common path costs one scan —
 * of the messages after `validUpTo` only, when the caller knows `input.slice(0, validUpTo)` is
 * itself valid (the request before this one, extended).
 */
export function repairPairing(input: readonly Message[], validUpTo = 0): PairingRepair {
  const fixes: string[] = [];
  if (isValid(input, validUpTo)) return { messages: input as Message[], fixes };
  const out: Message[] = [];
  let i = 0;
  while (i < input.length) {
    const m = input[i]!;
    if (m.role === "toolResult") {
      fixes.push(`dropped an orphan result of ${m.toolName} (${m.toolCallId})`);
      i++;
      continue;
    }
    if (m.role === "assistant" && (m.stopReason === "error" || m.stopReason === "aborted")) {
      fixes.push(`left out an ${m.stopReason} assistant message`);
      i++;
      continue;
    }
    out.push(m);
    i++;
    if (m.role !== "assistant") continue;
    const calls = toolCalls(m);
    // Gather the results that follow this assistant message.
    const results = new Map<string, ToolResultMessage>();
    while (i < input.length && input[i]!.role === "toolResult") {
      const r = input[i] as ToolResultMessage;
      if (!calls.some((c) => c.id === r.toolCallId)) {
        fixes.push(`dropped an orphan result of ${r.toolName} (${r.toolCallId})`);
      } else if (results.has(r.toolCallId)) {
        fixes.push(`dropped a duplicate result for ${r.toolCallId}`);
      } else {
        results.set(r.toolCallId, r);
      }
      i++;
    }
    const inCallOrder = calls.filter((c) => results.has(c.id)).map((c) => c.id);
    if ([...results.keys()].some((id, k) => inCallOrder[k] !== id)) {
      fixes.push(`put the results of ${inCallOrder.join(", ")} in call order`);
    }
    for (const c of calls) {
      const r = results.get(c.id);
      if (r) {
        out.push(r);
      } else {
        fixes.push(`added a placeholder result for ${c.name} (${c.id})`);
        out.push({
          role: "toolResult",
          toolCallId: c.id,
          toolName: c.name,
          content: [{ type: "text", text: missingResult }],
          isError: true,
          timestamp: m.timestamp,
        });
      }
    }
  }
  if (out.length > 0 && out[0]!.role !== "user") {
    fixes.push("added a user message before a leading assistant message");
    out.unshift({
      role: "user",
      content: "(The earlier conversation is not included.)",
      timestamp: out[0]!.timestamp,
    });
  }
  return { messages: out, fixes };
}

function toolCalls(m: AssistantMessage): ToolCall[] {
  return m.content.filter((b): b is ToolCall => b.type === "toolCall");
}

/**
 * One scan: true when nothing needs fixing. With `from` > 0 the caller vouches that
 * `messages.slice(0, from)` is valid: a valid sequence ends where a call's results end, so the
 * scan picks up at `from` as if it had walked the prefix.
 */
export function isValid(messages: readonly Message[], from = 0): boolean {
  if (from === 0 && messages.length > 0 && messages[0]!.role !== "user") return false;
  let i = Math.min(from, messages.length);
  while (i < messages.length) {
    const m = messages[i]!;
    if (m.role === "toolResult") return false;
    i++;
    if (m.role !== "assistant") continue;
    if (m.stopReason === "error" || m.stopReason === "aborted") return false;
    for (const block of m.content) {
      if (block.type !== "toolCall") continue;
      const r = messages[i];
      if (r?.role !== "toolResult" || r.toolCallId !== block.id) return false;
      i++;
    }
  }
  return true;
}
