// @guppy/core/tools: the tool policy — the built-in tools' names, each role's set per channel
// and the `tools` setting's checks (createThreadRunner makes the tools themselves) — and the
// service tools an app may make itself.

export {
  createSearchCache,
  createWebSearch,
  type SearchCache,
  type SearchProvider,
  type SearchResult,
  searchProviderFrom,
  type WebSearch,
} from "../web/web-search.js";
export {
  createReadUrlTool,
  type ReadUrlDetails,
  type ReadUrlToolOptions,
  readUrlDefaults,
} from "./read-url-tool.js";
export {
  builtinToolNames,
  MCP_TOOL_SEPARATOR,
  roles,
  type ToolPolicySettings,
  type ToolRule,
  toolNamesFor,
  toolPolicyChannelProblem,
  toolPolicyValue,
} from "./tool-policy.js";
export { createWebSearchTool } from "./web-search-tool.js";
