import type { AgentToolResult } from "@mariozechner/pi-agent-core";

/** A plain-text tool result. */
export function textResult<T>(text: string, details: T): AgentToolResult<T> {
  return { content: [{ type: "text", text }], details };
}
