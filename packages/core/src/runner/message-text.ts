import type { AgentMessage } from "@mariozechner/pi-agent-core";
import type { AssistantMessage, Message } from "@mariozechner/pi-ai";

const llmRoles = new Set(["user", "assistant", "toolResult"]);

export function isLlmMessage(message: AgentMessage): message is Message {
  return llmRoles.has((message as { role: string }).role);
}

export function isAssistant(message: AgentMessage | undefined): message is AssistantMessage {
  return message !== undefined && (message as { role: string }).role === "assistant";
}

/** The visible text of a message (text blocks joined). */
export function messageText(message: AgentMessage): string {
  const content = (message as { content?: unknown }).content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((b): b is { type: "text"; text: string } => b?.type === "text")
    .map((b) => b.text)
    .join("");
}

/** One readable line for an error message from a provider. */
export function oneLine(text: string, max = 300): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
