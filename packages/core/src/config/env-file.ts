import { chmodSync, existsSync, readFileSync } from "node:fs";
import { writeFileAtomic } from "../fs/write.js";

/** `<home>/guppy.env`: KEY=value lines, the one place for keys (read by every command). */
export const ENV_FILE = "guppy.env";

export interface EnvFile {
  /** Variables by name, in file order; a later line of the same name wins. */
  values: Record<string, string>;
  /** Lines that are not `KEY=value`, comments or blank: `guppy.env line 3: ...`. */
  problems: string[];
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Reads a guppy.env file as systemd's EnvironmentFile and shells read the simple cases:
 * `KEY=value`, an optional `export `, `#` comments, values in single or double quotes (double
 * quotes take `\"`, `\\` and `\n`). A missing file is empty.
 */
export function readEnvFile(path: string): EnvFile {
  if (!existsSync(path)) return { values: {}, problems: [] };
  return parseEnvText(readFileSync(path, "utf8"), path);
}

export function parseEnvText(text: string, path = ENV_FILE): EnvFile {
  const values: Record<string, string> = {};
  const problems: string[] = [];
  for (const [i, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const body = line.startsWith("export ") ? line.slice(7).trimStart() : line;
    const eq = body.indexOf("=");
    const name = eq > 0 ? body.slice(0, eq).trim() : "";
    if (!NAME.test(name)) {
      problems.push(`${path} line ${i + 1}: expected KEY=value, got "${line.slice(0, 40)}"`);
      continue;
    }
    values[name] = unquote(body.slice(eq + 1).trim());
  }
  return { values, problems };
}

function unquote(value: string): string {
  if (value.length >= 2 && value.startsWith("'") && value.endsWith("'")) return value.slice(1, -1);
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
    return value.slice(1, -1).replace(/\\(["\\n])/g, (_, c: string) => (c === "n" ? "\n" : c));
  }
  // An unquoted value ends at a ` #` comment.
  const comment = value.search(/\s#/);
  return comment === -1 ? value : value.slice(0, comment).trimEnd();
}

/**
 * Sets variables in a guppy.env file, keeping its other lines and comments: a variable already
 * there is changed in place, a new one appended. Written atomically, mode 600 (it holds keys).
 */
export function setEnvFileValues(path: string, entries: Record<string, string>): void {
  const lines = existsSync(path) ? readFileSync(path, "utf8").split(/\r?\n/) : [];
  if (lines.at(-1) === "") lines.pop();
  const left = new Map(Object.entries(entries));
  const out = lines.map((raw) => {
    const body = raw.trim().replace(/^export\s+/, "");
    const name = body.slice(0, Math.max(0, body.indexOf("="))).trim();
    const value = left.get(name);
    if (value === undefined || raw.trim().startsWith("#")) return raw;
    left.delete(name);
    return `${name}=${quoteIfNeeded(value)}`;
  });
  for (const [name, value] of left) out.push(`${name}=${quoteIfNeeded(value)}`);
  writeFileAtomic(path, `${out.join("\n")}\n`, 0o600);
  chmodSync(path, 0o600);
}

function quoteIfNeeded(value: string): string {
  return /^[\x21-\x7e]*$/.test(value) && !/["'#\\]/.test(value)
    ? value
    : `"${value.replace(/(["\\])/g, "\\$1").replace(/\n/g, "\\n")}"`;
}
