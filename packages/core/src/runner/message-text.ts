import type { AgentMessage } from "@mariozechner/pi-agent-core";
import type { AssistantMessage, Message, Usage } from "@mariozechner/pi-ai";

const llmRoles = new Set(["user", "assistant", "toolResult"]);

export function isLlmMessage(message: AgentMessage): message is Message {
  return llmRoles.has((message as { role: string }).role);
}

export function isAssistant(message: AgentMessage | undefined): message is AssistantMessage {
  return message !== undefined && (message as { role: string }).role === "assistant";
}

/** The usage of an answer guppy made itself (no request): all zero, a fresh object each time. */
export function zeroUsage(): Usage {
  return {
    input: 0,
    output: 0,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 0,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };
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

const flatten = (text: string) => text.replace(/\s+/g, " ").trim();

/**
 * The text on one readable line (whitespace runs made one space), cut to `max` characters with
 * "…": an error message from a provider, an event on the gateway's terminal. Only as much of the
 * text is flattened as the line can show: an answer or tool output of megabytes is not copied
 * whole for a short line.
 */
export function oneLine(text: string, max = 300): string {
  let end = Math.min(text.length, 4 * max);
  let line = flatten(text.slice(0, end));
  // Whitespace runs can shrink a prefix below the line's length: take more.
  while (line.length <= max && end < text.length) {
    end = Math.min(text.length, 4 * end);
    line = flatten(text.slice(0, end));
  }
  const more = line.length > max || (end < text.length && /\S/.test(text.slice(end)));
  return more ? `${line.slice(0, max - 1)}…` : line;
}

/**
 * The text without its trailing "\n"s. A loop from the end: `text.replace(/\n+$/, "")` tries a
 * match at every run of newlines and scans each to its end, which is quadratic in a text of many
 * newline runs (a 1 MB model answer or command output of them took seconds).
 */
export function trimTrailingNewlines(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 10) end--;
  return end === text.length ? text : text.slice(0, end);
}
