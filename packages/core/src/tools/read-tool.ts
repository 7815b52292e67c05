import { closeSync } from "node:fs";
import type { AgentTool } from "@mariozechner/pi-agent-core";
import { type Static, Type } from "typebox";
import { defaultPageLimits, type PageLimits, readPage } from "./read-page.js";
import type { ToolContext } from "./tool-context.js";
import {
  fileLooksBinary,
  openChecked,
  regularFileStat,
  textResult,
  toolPath,
} from "./tool-context.js";

const parameters = Type.Object({
  path: Type.String({ description: "File path, absolute or relative to the workspace" }),
  offset: Type.Optional(Type.Integer({ minimum: 1, description: "First line to show (1-based)" })),
  limit: Type.Optional(Type.Integer({ minimum: 1, description: "How many lines (default 2000)" })),
});

const DEFAULT_LIMIT = 2000;
const MAX_LINE = 2000;

/**
 * `read`: a text file with line numbers, paged by offset/limit; binary files are refused. Only
 * the part of the file the page needs is read (see read-page.ts), so a page of a file of any
 * size costs little; `pageLimits` is for tests.
 */
export function createReadTool(
  ctx: ToolContext,
  pageLimits: PageLimits = defaultPageLimits,
): AgentTool<typeof parameters> {
  return {
    name: "read",
    label: "read",
    description:
      "Read a text file with line numbers. Use offset (1-based line) and limit to page through long files.",
    parameters,
    async execute(_id, params: Static<typeof parameters>) {
      const path = toolPath(ctx, params.path, "read", "read");
      // A FIFO or device is refused before anything opens it; then the checked file itself
      // is opened (a folder swapped for a symlink since the check cannot redirect the read).
      regularFileStat(path, "read");
      const file = openChecked(path, "read");
      if (!file) {
        const given = params.path;
        throw new Error(
          `File not found: ${given}${given === path ? "" : ` (resolved to ${path})`}.`,
        );
      }
      const { fd, stat } = file;
      let page: Awaited<ReturnType<typeof readPage>>;
      try {
        if (fileLooksBinary(fd)) {
          throw new Error(
            `${path} is a binary file (${stat.size} bytes); read shows text files only.`,
          );
        }
        page = await readPage(
          fd,
          {
            start: (params.offset ?? 1) - 1,
            limit: params.limit ?? DEFAULT_LIMIT,
            maxChars: ctx.toolResultMaxChars,
            maxLineChars: MAX_LINE,
          },
          pageLimits,
        );
      } finally {
        closeSync(fd);
      }
      const start = (params.offset ?? 1) - 1;
      const limit = params.limit ?? DEFAULT_LIMIT;
      const { total } = page;
      if (stat.size === 0) {
        if (start === 0) return textResult("(empty file)", { path });
        throw new Error(`offset ${params.offset} is past the end of ${path} (an empty file).`);
      }
      if (total !== undefined && start >= total && total > 0) {
        const size = total === 1 ? "1 line" : `${total} lines`;
        throw new Error(`offset ${params.offset} is past the end of ${path} (${size}).`);
      }
      if (total === 1 && page.lines[0] === "") return textResult("(empty file)", { path });
      const end = Math.min(total ?? page.known, start + limit);
      const width = String(end).length;
      let out = "";
      let shownEnd = start;
      for (let i = start; i < end && i - start < page.lines.length; i++) {
        const row = `${String(i + 1).padStart(width)}\t${page.lines[i - start]}\n`;
        if (out.length + row.length > ctx.toolResultMaxChars && i > start) break;
        out += row;
        shownEnd = i + 1;
      }
      if (total === undefined) {
        out += `\n[Lines ${start + 1}-${shownEnd} of at least ${page.known}; this ${stat.size}-byte file was not read to its end to count them. Continue with offset=${shownEnd + 1}.]`;
      } else if (shownEnd < total || start > 0) {
        out += `\n[Lines ${start + 1}-${shownEnd} of ${total}.${
          shownEnd < total ? ` Continue with offset=${shownEnd + 1}.` : ""
        }]`;
      }
      return textResult(out, { path });
    },
  };
}
