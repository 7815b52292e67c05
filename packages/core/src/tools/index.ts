// @guppy/core/tools: the tool policy — the built-in tools' names, each role's set per channel
// and the `tools` setting's checks (createThreadRunner makes the tools themselves).

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
