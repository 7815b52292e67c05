import { readFileSync } from "node:fs";
import type { AgentTool } from "@mariozechner/pi-agent-core";
import { type Static, Type } from "typebox";
import { regularFileStat } from "./regular-file.js";
import { resolveToolPath } from "./resolve-path.js";
import { fileLooksBinary } from "./text-bytes.js";
import { textResult } from "./text-result.js";
import type { ToolContext } from "./tool-context.js";

const parameters = Type.Object({
  path: Type.String({ description: "File path, absolute or relative to the workspace" }),
  offset: Type.Optional(Type.Integer({ minimum: 1, description: "First line to show (1-based)" })),
  limit: Type.Optional(Type.Integer({ minimum: 1, description: "How many lines (default 2000)" })),
});

const DEFAULT_LIMIT = 2000;
const MAX_LINE = 2000;

/** `read`: a text file with line numbers, paged by offset/limit; binary files are refused. */
export function createReadTool(ctx: ToolContext): AgentTool<typeof parameters> {
  return {
    name: "read",
    label: "read",
    description:
      "Read a text file with line numbers. Use offset (1-based line) and limit to page through long files.",
    parameters,
    async execute(_id, params: Static<typeof parameters>) {
      const path = resolveToolPath(ctx.workspaceDir, params.path);
      const stat = regularFileStat(path, "read");
      if (!stat) {
        const given = params.path;
        throw new Error(
          `File not found: ${given}${given === path ? "" : ` (resolved to ${path})`}.`,
        );
      }
      if (fileLooksBinary(path)) {
        throw new Error(
          `${path} is a binary file (${stat.size} bytes); read shows text files only.`,
        );
      }
      const lines = readFileSync(path, "utf8").split("\n");
      if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
      const total = lines.length;
      const start = (params.offset ?? 1) - 1;
      if (start >= total && total > 0) {
        throw new Error(`offset ${params.offset} is past the end of ${path} (${total} lines).`);
      }
      const end = Math.min(total, start + (params.limit ?? DEFAULT_LIMIT));
      const width = String(end).length;
      let out = "";
      let shownEnd = start;
      for (let i = start; i < end; i++) {
        let line = lines[i] ?? "";
        if (line.length > MAX_LINE)
          line = `${line.slice(0, MAX_LINE)} [line cut at ${MAX_LINE} chars]`;
        const row = `${String(i + 1).padStart(width)}\t${line}\n`;
        if (out.length + row.length > ctx.toolResultMaxChars && i > start) break;
        out += row;
        shownEnd = i + 1;
      }
      if (total === 0 || (total === 1 && lines[0] === ""))
        return textResult("(empty file)", { path });
      if (shownEnd < total || start > 0) {
        out += `\n[Lines ${start + 1}-${shownEnd} of ${total}.${
          shownEnd < total ? ` Continue with offset=${shownEnd + 1}.` : ""
        }]`;
      }
      return textResult(out, { path });
    },
  };
}
