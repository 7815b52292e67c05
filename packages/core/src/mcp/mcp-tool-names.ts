import { MCP_TOOL_SEPARATOR } from "../tools/tool-policy.js";

/** The longest tool name the providers accept (OpenAI's and Anthropic's limit). */
export const MAX_TOOL_NAME_LENGTH = 64;

/** A name with every character outside [A-Za-z0-9_-] replaced by `_` (what providers allow). */
export function sanitiseToolName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, "_");
}

/**
 * The name the model sees for `tool` of `server`: `<server>__<tool>`, sanitised, cut to 64
 * characters, and made unique among `taken` (to which it is added) by a `_2`, `_3`, ... suffix.
 * The caller hands the tools in a stable order, so the same tools get the same names each time.
 */
export function mcpToolName(server: string, tool: string, taken: Set<string>): string {
  const full = sanitiseToolName(`${server}${MCP_TOOL_SEPARATOR}${tool}`);
  let name = full.slice(0, MAX_TOOL_NAME_LENGTH);
  for (let n = 2; taken.has(name); n++) {
    const suffix = `_${n}`;
    name = full.slice(0, MAX_TOOL_NAME_LENGTH - suffix.length) + suffix;
  }
  taken.add(name);
  return name;
}
