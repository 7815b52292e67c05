import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { AgentTool } from "@mariozechner/pi-agent-core";
import { type Static, Type } from "typebox";
import { regularFileStat } from "./regular-file.js";
import { resolveToolPath } from "./resolve-path.js";
import { textResult } from "./text-result.js";
import type { ToolContext } from "./tool-context.js";

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
      const path = resolveToolPath(ctx.workspaceDir, params.path);
      // Nothing there yet is fine (the file is created); something other than a file is not.
      regularFileStat(path, "write");
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, params.content, "utf8");
      const bytes = Buffer.byteLength(params.content, "utf8");
      return textResult(`Wrote ${bytes} bytes to ${path}.`, { path, bytes });
    },
  };
}
