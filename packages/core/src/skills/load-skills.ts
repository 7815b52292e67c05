import { createRequire } from "node:module";
import { join } from "node:path";
import { booleanValue } from "../config/setting-parsers.js";
import type { SettingDefinitions, SettingValues } from "../config/settings-schema.js";
import { NoFollowError } from "../fs/no-follow.js";
import { type Scope, scopeDirs } from "../memory/memory.js";
import { listSubdirsFresh, readFileFresh } from "../memory/read-text-file.js";

export interface Skill {
  name: string;
  description: string;
  /** Host path of the SKILL.md. */
  path: string;
  /** Directory holding SKILL.md and any companion files. */
  dir: string;
  scope: Scope;
  /** The instructions after the frontmatter. */
  body: string;
  /** Broader scopes that define a skill of the same name which this one hides. */
  overrides: Scope[];
}

export interface LoadedSkills {
  /** The skills the thread sees, sorted by name (a stable order keeps the prompt cache-friendly). */
  skills: Skill[];
  /** One line per skipped file or duplicate, each naming the file and the problem. */
  warnings: string[];
}

/**
 * Finds the skills a thread sees: `<dir>/skills/<name>/SKILL.md` at the global, transport and
 * channel levels. A narrower level overrides a broader one by name. A file with bad frontmatter
 * is skipped with a warning; a second skill of the same name in one level is ignored with a
 * warning (the first, in directory-name order, wins).
 */
export function loadSkills(home: string, threadId: string): LoadedSkills {
  const warnings: string[] = [];
  const merged = new Map<string, Skill>();
  for (const { scope, dir } of scopeDirs(home, threadId)) {
    for (const skill of loadScope(home, join(dir, "skills"), scope, warnings)) {
      const hidden = merged.get(skill.name);
      merged.set(
        skill.name,
        hidden ? { ...skill, overrides: [...hidden.overrides, hidden.scope] } : skill,
      );
    }
  }
  const skills = [...merged.values()].sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
  return { skills, warnings };
}

function loadScope(home: string, skillsDir: string, scope: Scope, warnings: string[]): Skill[] {
  const found = new Map<string, Skill>();
  for (const entry of listSubdirsFresh(skillsDir)) {
    const dir = join(skillsDir, entry);
    const path = join(dir, "SKILL.md");
    let text: string | undefined;
    try {
      text = readFileFresh(path, home);
    } catch (error) {
      if (error instanceof NoFollowError) {
        warnings.push(`skill ${path} skipped: refused ${error.message}`);
        continue;
      }
      const code = (error as NodeJS.ErrnoException).code;
      warnings.push(`skill ${path} skipped: cannot read it (${code ?? error})`);
      continue;
    }
    if (text === undefined) continue;
    const parsed = parseSkillFile(text);
    if (!parsed.ok) {
      warnings.push(`skill ${path} skipped: ${parsed.problem}`);
      continue;
    }
    const { name, description, body } = parsed.skill;
    const first = found.get(name);
    if (first) {
      warnings.push(
        `skill ${path} skipped: the ${scope} skills already have "${name}" (${first.path})`,
      );
      continue;
    }
    found.set(name, { name, description, path, dir, scope, body, overrides: [] });
  }
  return [...found.values()];
}

type YamlParse = (source: string) => unknown;
let yamlParse: YamlParse | undefined;

/** Loads `yaml` on first use (~40 ms): a home without skills never pays for it at startup. */
function parseYaml(source: string): unknown {
  yamlParse ??= (createRequire(import.meta.url)("yaml") as { parse: YamlParse }).parse;
  return yamlParse(source);
}

export interface SkillFrontmatter {
  name: string;
  description: string;
  /** The Markdown after the frontmatter. */
  body: string;
}

export type ParsedSkill = { ok: true; skill: SkillFrontmatter } | { ok: false; problem: string };

const MAX_NAME = 64;
const MAX_DESCRIPTION = 1024;

/** Parses a SKILL.md: YAML frontmatter between `---` lines with a `name` and a `description`. */
export function parseSkillFile(text: string): ParsedSkill {
  const lines = text
    .replace(/^\uFEFF/, "")
    .replace(/\r\n/g, "\n")
    .split("\n");
  const isFence = (line: string | undefined) => line?.trimEnd() === "---";
  if (!isFence(lines[0])) {
    return { ok: false, problem: "no YAML frontmatter (the file must start with a --- line)" };
  }
  const end = lines.findIndex((line, i) => i > 0 && isFence(line));
  if (end === -1) return { ok: false, problem: "the frontmatter has no closing --- line" };
  const frontmatter = lines.slice(1, end).join("\n");
  const body = lines.slice(end + 1).join("\n");
  let data: unknown;
  try {
    data = parseYaml(frontmatter);
  } catch (error) {
    return { ok: false, problem: describeYamlError(error) };
  }
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    return {
      ok: false,
      problem: "the frontmatter must be a YAML mapping with name and description",
    };
  }
  const fields = data as Record<string, unknown>;
  const name = checkText(fields.name, "name", MAX_NAME);
  if (typeof name !== "string") return name;
  if (/[\s/\\]/.test(name)) {
    return {
      ok: false,
      problem: `"name" must not contain spaces or slashes (got ${JSON.stringify(name)})`,
    };
  }
  const description = checkText(fields.description, "description", MAX_DESCRIPTION);
  if (typeof description !== "string") return description;
  return { ok: true, skill: { name, description, body: body.trim() } };
}

/**
 * One line for a YAML error: yaml's message is a sentence, " at line L, column C:" and a snippet
 * of the source below; the sentence is kept and the place given in lines of the file (the
 * frontmatter starts on its second line).
 */
function describeYamlError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const sentence = (message.split("\n")[0] ?? "")
    .replace(/ at line \d+, column \d+:?\s*$/, "")
    .replace(/:\s*$/, "");
  const at = (error as { linePos?: ReadonlyArray<{ line: number; col: number }> }).linePos?.[0];
  const where = at ? ` at line ${at.line + 1}, column ${at.col}` : "";
  return `invalid YAML in the frontmatter${where}: ${sentence}`;
}

function checkText(
  value: unknown,
  field: string,
  max: number,
): string | { ok: false; problem: string } {
  if (value === undefined || value === null) {
    return { ok: false, problem: `"${field}" is missing from the frontmatter` };
  }
  if (typeof value !== "string" || value.trim() === "") {
    return { ok: false, problem: `"${field}" must be a non-empty string` };
  }
  const text = value.trim().replace(/\s+/g, " ");
  if (text.length > max) {
    return { ok: false, problem: `"${field}" is longer than ${max} characters` };
  }
  return text;
}

/** How skills reach the system prompt. */
export const skillSettings = {
  skillsInline: {
    env: "GUPPY_SKILLS_INLINE",
    parse: booleanValue,
    default: false,
    description: "Put whole SKILL.md bodies in the system prompt instead of a listing",
  },
} satisfies SettingDefinitions;

export type SkillSettingValues = SettingValues<typeof skillSettings>;
