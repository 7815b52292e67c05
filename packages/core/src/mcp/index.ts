// @guppy/core/mcp: the MCP client — servers from the `mcpServers` setting, their tools offered to
// the agent as `<server>__<tool>` (createThreadRunner's `extraTools`).
export { createMcpManager, type McpManager, type McpManagerOptions } from "./create-mcp-manager.js";
export { createMcpConnection, type McpConnection } from "./mcp-connection.js";
export { type McpCallResult, mcpToolResult } from "./mcp-result.js";
export { normaliseToolSchema, type SchemaResult } from "./mcp-schema.js";
export type { McpHttpServer, McpServerConfig, McpServers, McpStdioServer } from "./mcp-settings.js";
export { MAX_TOOL_NAME_LENGTH, mcpToolName, sanitiseToolName } from "./mcp-tool-names.js";
export type * from "./types.js";
