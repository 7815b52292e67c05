import type { McpServerConfig } from "./mcp-settings.js";

/** Where one server's connection stands. */
export type McpServerState =
  | { state: "starting" }
  | { state: "connected" }
  /** It failed to start or died; `retryInMs`: when the next attempt is (none once closed). */
  | { state: "failed"; reason: string; retryInMs?: number };

/** A tool as its server lists it (the parts guppy uses). */
export interface McpToolInfo {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: unknown;
}

/** One server as `guppy mcp list` shows it: its state and the names the model sees its tools by. */
export type McpServerStatus = McpServerState & {
  name: string;
  transport: McpServerConfig["type"];
  /** Full tool names (`<server>__<tool>`), in the order the model sees them. */
  tools: string[];
  /** Tools left out, each with why (a schema no provider would accept). */
  skipped: { tool: string; reason: string }[];
};
