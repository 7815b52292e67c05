import { createRequire } from "node:module";

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
