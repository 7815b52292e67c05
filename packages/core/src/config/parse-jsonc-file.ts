import { ConfigError } from "./config-error.js";
import { jsonSyntaxErrorLine } from "./json-syntax-error.js";
import { stripJsonComments } from "./jsonc.js";

/**
 * A hand-edited JSON file's value: comments and trailing commas allowed, a byte order mark
 * (Notepad saves one) dropped; undefined when nothing is left. Invalid JSON is a one-line
 * ConfigError naming `path`, line and column — never V8's message, which may quote the file (a
 * secret in it). settings.json and the files under access/ are read this way.
 */
export function parseJsoncFile(path: string, text: string): unknown {
  const json = stripJsonComments(text.replace(/^\uFEFF/, ""));
  if (json.trim() === "") return undefined;
  try {
    return JSON.parse(json);
  } catch {
    throw new ConfigError(jsonSyntaxErrorLine(path, json));
  }
}
