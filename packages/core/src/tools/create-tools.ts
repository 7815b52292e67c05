import type { AgentTool } from "@mariozechner/pi-agent-core";
import { createBashTool } from "./bash-tool.js";
import { createEditTool } from "./edit-tool.js";
import { createReadTool } from "./read-tool.js";
import type { ToolContext } from "./tool-context.js";
import { createWriteTool } from "./write-tool.js";

/** The standard tool set every run gets, in a fixed order (a stable prompt keeps caches warm). */
export function createCoreTools(ctx: ToolContext): AgentTool[] {
  return [
    createBashTool(ctx),
    createReadTool(ctx),
    createWriteTool(ctx),
    createEditTool(ctx),
  ] as AgentTool[];
}
