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
  const normalized = text.replace(/^\uFEFF/, "").replace(/\r\n/g, "\n");
  if (!normalized.startsWith("---\n")) {
    return { ok: false, problem: "no YAML frontmatter (the file must start with a --- line)" };
  }
  const end = normalized.indexOf("\n---", 3);
  const afterEnd = end === -1 ? "" : normalized.slice(end + 4);
  if (end === -1 || !(afterEnd === "" || afterEnd.startsWith("\n"))) {
    return { ok: false, problem: "the frontmatter has no closing --- line" };
  }
  let data: unknown;
  try {
    data = parseYaml(normalized.slice(4, end + 1));
  } catch (error) {
    const first = (error instanceof Error ? error.message : String(error)).split("\n")[0];
    return { ok: false, problem: `invalid YAML in the frontmatter: ${first}` };
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
  return { ok: true, skill: { name, description, body: afterEnd.trim() } };
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
