import { chmodSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ENV_FILE, readEnvFile, setEnvFileValues } from "@guppy/core/config";
import { writeFileAtomic } from "@guppy/core/fs";
import { applyEdits, type Node as JsonNode, modify, parseTree } from "jsonc-parser";
import { settingsTemplate } from "./init-command.js";

/** settings.json keys setup sets (a value) or removes (undefined). */
export type SettingsChanges = Partial<Record<"model" | "baseUrl" | "api" | "apiKey", string>>;

const formatting = { formattingOptions: { insertSpaces: true, tabSize: 2, eol: "\n" } };

/**
 * Sets and removes top-level keys of `<home>/settings.json` with jsonc-parser's edits, so its
 * comments, order and other keys stay as they were. A missing file starts as `guppy init`'s
 * commented template. Returns the keys it changed; writes only when one did.
 */
export function editSettingsFile(home: string, changes: SettingsChanges): string[] {
  const path = join(home, "settings.json");
  const before = existsSync(path) ? readFileSync(path, "utf8") : undefined;
  let text = before ?? settingsTemplate;
  const changed: string[] = [];
  // Values first, removals after: a removed last key then leaves the one before it in place.
  const entries = Object.entries(changes).sort(
    ([, a], [, b]) => Number(a === undefined) - Number(b === undefined),
  );
  for (const [key, value] of entries) {
    const next =
      value === undefined
        ? withoutKey(text, key)
        : applyEdits(text, modify(text, [key], value, formatting));
    if (next !== text) changed.push(key);
    text = next;
  }
  if (before === undefined || text !== before) {
    mkdirSync(home, { recursive: true, mode: 0o700 });
    writeFileAtomic(path, text, 0o600);
    chmodSync(path, 0o600);
  }
  return changed;
}

/**
 * `text` without the top-level `key`: its line goes (with its comma), the lines around it and
 * their comments stay. (jsonc-parser's removal starts at the end of the value before, taking a
 * comment after that value with it.) A key that was last leaves a trailing comma, which
 * settings.json allows.
 */
function withoutKey(text: string, key: string): string {
  const property = topLevel(text).find((p) => p.children?.[0]?.value === key);
  if (!property) return text;
  let start = property.offset;
  let end = property.offset + property.length;
  end += /^[ \t]*,?[ \t]*(\r?\n)?/.exec(text.slice(end))?.[0].length ?? 0;
  const lineStart = text.lastIndexOf("\n", start - 1) + 1;
  if (/^[ \t]*$/.test(text.slice(lineStart, start))) start = lineStart;
  return text.slice(0, start) + text.slice(end);
}

function topLevel(text: string): JsonNode[] {
  return parseTree(text, [], { allowTrailingComma: true })?.children ?? [];
}

/** The top-level keys present in `<home>/settings.json` (an `apiKey` there would win over guppy.env's). */
export function settingsFileKeys(home: string): string[] {
  const path = join(home, "settings.json");
  if (!existsSync(path)) return [];
  return topLevel(readFileSync(path, "utf8")).flatMap((p) => {
    const key = p.children?.[0]?.value;
    return typeof key === "string" ? [key] : [];
  });
}

export const envFilePath = (home: string) => join(home, ENV_FILE);

/** The variables `<home>/guppy.env` holds now. */
export function envFileValues(home: string): Record<string, string> {
  return readEnvFile(envFilePath(home)).values;
}

/** Sets keys in `<home>/guppy.env` (mode 600), keeping its other lines. */
export function writeEnvValues(home: string, entries: Record<string, string>): void {
  if (Object.keys(entries).length === 0) return;
  mkdirSync(home, { recursive: true, mode: 0o700 });
  setEnvFileValues(envFilePath(home), entries);
}
