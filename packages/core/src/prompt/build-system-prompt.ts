import type { AgentTool } from "@mariozechner/pi-agent-core";

export interface SystemPromptInput {
  threadId: string;
  workspaceDir: string;
  home: string;
  tools: readonly AgentTool[];
  /** Today's date (YYYY-MM-DD) in the configured time zone: a date, never a clock time, so the prompt stays cache-stable. */
  date: string;
  os: string;
}

const defaultIdentity =
  "You are guppy, a personal AI agent running on your user's own machine. You act for them with tools: " +
  "you run shell commands and read, write and edit files. Be direct and brief; do the work rather than describe it.";

/**
 * Assembles the system prompt. The same inputs always give the same bytes (no clock time, fixed
 * ordering), which keeps provider prompt caches warm.
 */
export function buildSystemPrompt(input: SystemPromptInput): string {
  const toolLines = input.tools.map((t) => `- ${t.name}: ${t.description}`).join("\n");
  return [
    defaultIdentity,
    "## Runtime",
    `- Date: ${input.date}`,
    `- OS: ${input.os}`,
    `- Thread: ${input.threadId}`,
    `- Workspace (relative paths resolve here): ${input.workspaceDir}`,
    `- Data directory: ${input.home}`,
    "## Tools",
    toolLines,
  ].join("\n\n");
}

/** YYYY-MM-DD of `now` in `timeZone` (the system's when unset). */
export function localDate(now: Date, timeZone?: string): string {
  const parts = new Intl.DateTimeFormat("en-CA", {
    timeZone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
  }).formatToParts(now);
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? "";
  return `${get("year")}-${get("month")}-${get("day")}`;
}
