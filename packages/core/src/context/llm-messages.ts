import type { AgentMessage } from "@mariozechner/pi-agent-core";
import type { Message } from "@mariozechner/pi-ai";
import { isLlmMessage } from "../runner/message-text.js";
import { compactionToUser, isCompactionMessage } from "./compaction-message.js";
import { repairPairing } from "./repair-pairing.js";

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
