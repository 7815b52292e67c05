import type { AgentMessage } from "@mariozechner/pi-agent-core";
import { type AssistantMessage, isContextOverflow } from "@mariozechner/pi-ai";

/** A provider's "context too long" answer (pi-ai's patterns for ~20 providers, plus a few generic ones). */
export function isOverflowError(m: AgentMessage | undefined): m is AssistantMessage {
  if (!m || (m as { role: string }).role !== "assistant") return false;
  const a = m as AssistantMessage;
  if (a.stopReason !== "error") return false;
  if (isContextOverflow(a)) return true;
  return /context[ _-]?(length|window)|too long|too many tokens/i.test(a.errorMessage ?? "");
}
