import { type DailyNote, readRecentDailyNotes } from "../memory/daily-notes.js";
import { type MemoryLevel, readMemoryLevels } from "../memory/memory-levels.js";
import { loadSkills, type Skill } from "../skills/load-skills.js";
import { type BootstrapFile, readBootstrapFiles } from "./bootstrap-files.js";

/** Everything the system prompt takes from disk, read fresh before each run. */
export interface PromptSources {
  bootstrap: BootstrapFile[];
  memory: MemoryLevel[];
  /** Today's note first, then the previous days. */
  dailyNotes: DailyNote[];
  skills: Skill[];
  /** Problems found while loading skills (one line each, naming the file). */
  warnings: string[];
}

export function loadPromptSources(options: {
  home: string;
  threadId: string;
  now: Date;
  timeZone?: string;
}): PromptSources {
  const { home, threadId } = options;
  const { skills, warnings } = loadSkills(home, threadId);
  return {
    bootstrap: readBootstrapFiles(home),
    memory: readMemoryLevels(home, threadId),
    dailyNotes: readRecentDailyNotes(home, options.now, options.timeZone),
    skills,
    warnings,
  };
}
