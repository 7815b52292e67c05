import { join } from "node:path";
import { listSubdirsFresh, readFileFresh } from "../memory/read-cache.js";
import { type Scope, scopeDirs } from "../memory/scope-dirs.js";
import { parseSkillFile } from "./parse-skill-file.js";

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
    for (const skill of loadScope(join(dir, "skills"), scope, warnings)) {
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

function loadScope(skillsDir: string, scope: Scope, warnings: string[]): Skill[] {
  const found = new Map<string, Skill>();
  for (const entry of listSubdirsFresh(skillsDir)) {
    const dir = join(skillsDir, entry);
    const path = join(dir, "SKILL.md");
    let text: string | undefined;
    try {
      text = readFileFresh(path);
    } catch (error) {
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
