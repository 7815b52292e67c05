import { mkdirSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { AgentTool } from "@mariozechner/pi-agent-core";
import { type Static, Type } from "typebox";
import type { ToolContext } from "./tool-context.js";
import { regularFileStat, textResult, toolPath } from "./tool-context.js";

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
      makeParents(path);
      writeFileSync(path, params.content, "utf8");
      const bytes = Buffer.byteLength(params.content, "utf8");
      return textResult(`Wrote ${bytes} bytes to ${path}.`, { path, bytes });
    },
  };
}

/**
 * Creates the directories above `path`; where one of them is a file, says which, rather than
 * node's "EEXIST: file already exists, mkdir '…'" (which names the directory it wanted).
 */
function makeParents(path: string): void {
  try {
    mkdirSync(dirname(path), { recursive: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EEXIST" && code !== "ENOTDIR") throw error;
    for (let dir = dirname(path); dir !== dirname(dir); dir = dirname(dir)) {
      let stat: ReturnType<typeof statSync> | undefined;
      try {
        stat = statSync(dir);
      } catch {
        continue; // missing, or under a file: look further up
      }
      if (!stat.isDirectory()) {
        throw new Error(`Cannot write ${path}: ${dir} is a file, not a directory.`);
      }
    }
    throw error;
  }
}
