import { closeSync } from "node:fs";
import type { AgentTool } from "@mariozechner/pi-agent-core";
import { type Static, Type } from "typebox";
import { readAll } from "../fs/no-follow.js";
import type { ToolContext } from "./tool-context.js";
import {
  decodeUtf8,
  looksBinary,
  openChecked,
  regularFileStat,
  textResult,
  toolPath,
  writeChecked,
} from "./tool-context.js";

const parameters = Type.Object({
  path: Type.String({ description: "File path, absolute or relative to the workspace" }),
  old_string: Type.String({
    description: "Exact text to replace (must be unique unless replace_all)",
  }),
  new_string: Type.String({ description: "Replacement text" }),
  replace_all: Type.Optional(Type.Boolean({ description: "Replace every occurrence" })),
});

/** `edit`: exact string replacement; old_string must match exactly once unless replace_all. */
export function createEditTool(ctx: ToolContext): AgentTool<typeof parameters> {
  return {
    name: "edit",
    label: "edit",
    description:
      "Replace an exact string in a file. old_string must appear exactly once (include surrounding lines to make it unique), or set replace_all to change every occurrence.",
    parameters,
    async execute(_id, params: Static<typeof parameters>) {
      const path = toolPath(ctx, params.path, "write", "edit");
      const missing = () => new Error(`File not found: ${path}. Use write to create a new file.`);
      if (!regularFileStat(path, "edit")) throw missing();
      // The checked file itself is read and then replaced in its own folder (see writeChecked).
      const file = openChecked(path, "edit");
      if (!file) throw missing();
      let bytes: Buffer;
      try {
        bytes = readAll(file.fd, file.stat.size);
      } finally {
        closeSync(file.fd);
      }
      if (looksBinary(bytes)) {
        throw new Error(
          `${path} is a binary file (${bytes.length} bytes); edit changes text files only.`,
        );
      }
      const decoded = decodeUtf8(bytes);
      if ("invalidAt" in decoded) {
        throw new Error(
          `${path} is not UTF-8 text (invalid byte at offset ${decoded.invalidAt}); edit changes UTF-8 text files only, so it was left unchanged.`,
        );
      }
      const { text } = decoded;
      if (params.old_string === "")
        throw new Error("old_string is empty; give the exact text to replace.");
      if (params.old_string === params.new_string) {
        throw new Error("old_string and new_string are the same; nothing would change.");
      }
      // A file with CRLF line ends, and strings written with \n (as `read` shows lines): match
      // and write them with the file's line ends.
      const crlf =
        text.includes("\r\n") &&
        params.old_string.includes("\n") &&
        !params.old_string.includes("\r");
      const toFile = (s: string) => (crlf ? s.replace(/\r?\n/g, "\r\n") : s);
      const oldString = toFile(params.old_string);
      const newString = toFile(params.new_string);
      const count = countOccurrences(text, oldString);
      if (count === 0) {
        throw new Error(
          `old_string was not found in ${path}. It must match exactly, including whitespace and indentation; read the file first.`,
        );
      }
      if (count > 1 && !params.replace_all) {
        throw new Error(
          `old_string occurs ${count} times in ${path}; include more surrounding text to make it unique, or set replace_all.`,
        );
      }
      const updated = params.replace_all
        ? text.split(oldString).join(newString)
        : text.replace(oldString, () => newString);
      writeChecked(path, updated, "edit");
      const n = params.replace_all ? count : 1;
      return textResult(`Replaced ${n} occurrence${n === 1 ? "" : "s"} in ${path}.`, {
        path,
        replacements: n,
      });
    },
  };
}

function countOccurrences(text: string, needle: string): number {
  let count = 0;
  let at = text.indexOf(needle);
  while (at !== -1) {
    count++;
    at = text.indexOf(needle, at + needle.length);
  }
  return count;
}
