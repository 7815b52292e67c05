import type { AgentTool } from "@mariozechner/pi-agent-core";
import { type Static, Type } from "typebox";
import type { ToolContext } from "./tool-context.js";
import { regularFileStat, textResult, toolPath, writeChecked } from "./tool-context.js";

const parameters = Type.Object({
  path: Type.String({ description: "File path, absolute or relative to the workspace" }),
  content: Type.String({ description: "The whole new content of the file" }),
});

/** `write`: creates or overwrites a file, creating parent directories. */
export function createWriteTool(ctx: ToolContext): AgentTool<typeof parameters> {
  return {
    name: "write",
    label: "write",
    description:
      "Write a whole file (create or overwrite). Parent directories are created. For small changes to an existing file use edit.",
    parameters,
    async execute(_id, params: Static<typeof parameters>) {
      const path = toolPath(ctx, params.path, "write", "write");
      // Nothing there yet is fine (the file is created); something other than a file is not.
      regularFileStat(path, "write");
      writeChecked(path, params.content, "write");
      const bytes = Buffer.byteLength(params.content, "utf8");
      return textResult(`Wrote ${bytes} bytes to ${path}.`, { path, bytes });
    },
  };
}
