import { join } from "node:path";
import {
  type DailyNote,
  localDate,
  type MemoryLevel,
  readMemoryLevels,
  readRecentDailyNotes,
} from "../memory/memory.js";
import { type Refused, readTextFile, remember } from "../memory/read-text-file.js";
import { loadSkills, type Skill } from "../skills/load-skills.js";
import { parseThreadId } from "../store/thread-layout.js";

/**
 * How long the prompt sources read for one channel are reused without looking at the disk. Every
 * thread of a channel sees the same files (global, transport and channel levels, today's notes),
 * so under load hundreds of runs a second share one read instead of a dozen stats each.
 */
export const PROMPT_SOURCES_FRESH_MS = 250;

let epoch = 0;

/**
 * Anything guppy runs may have written the files (a tool call ended): the next run of every
 * thread reads the disk again. What the agent wrote is therefore always in its next run; an edit
 * made outside guppy is seen within `PROMPT_SOURCES_FRESH_MS`.
 */
export function markPromptSourcesStale(): void {
  epoch++;
}

interface Entry {
  epoch: number;
  at: number;
  today: string;
  sources: PromptSources;
}

const MAX_ENTRIES = 256;
const cache = new Map<string, Entry>();

/** `loadPromptSources`, shared by the threads of a channel for `freshMs` (see above). */
export function loadPromptSourcesShared(options: {
  home: string;
  threadId: string;
  now: Date;
  timeZone?: string;
  freshMs?: number;
}): PromptSources {
  const ref = parseThreadId(options.threadId);
  const key = `${options.home}\0${ref.adapter}\0${ref.channel}\0${options.timeZone ?? ""}`;
  const at = options.now.getTime();
  const today = localDate(options.now, options.timeZone);
  const hit = cache.get(key);
  const age = hit ? at - hit.at : -1;
  if (
    hit &&
    hit.epoch === epoch &&
    hit.today === today &&
    age >= 0 &&
    age < (options.freshMs ?? PROMPT_SOURCES_FRESH_MS)
  ) {
    return hit.sources;
  }
  const read = loadPromptSources(options);
  // Files seldom change between reads: the same content keeps the same object, so each thread
  // reuses the prompt it built from it (and its token count) instead of building it again.
  const sources = hit && sameValue(hit.sources, read) ? hit.sources : read;
  remember(cache, key, { epoch, at, today, sources }, MAX_ENTRIES);
  return sources;
}

/**
 * Whether two values read from disk hold the same: the same strings and numbers in arrays and
 * plain objects of the same shape. The file reads keep an unchanged file's text, so the strings
 * compare by reference, and this costs microseconds per read of a channel's sources.
 */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => sameValue(x, b[i]));
  }
  if (Array.isArray(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  return keys.every((k) => Object.hasOwn(y, k) && sameValue(x[k], y[k]));
}

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
  // A file refused as a symlink is named among the warnings (the runner logs each once).
  const refused = (line: string) => warnings.push(line);
  return {
    bootstrap: readBootstrapFiles(home, refused),
    memory: readMemoryLevels(home, threadId, refused),
    dailyNotes: readRecentDailyNotes(home, options.now, options.timeZone, 2, refused),
    skills,
    warnings,
  };
}

/** Files in `<home>` that shape the agent, in the order the prompt places them. */
export const bootstrapFileNames = [
  "IDENTITY.md",
  "SOUL.md",
  "USER.md",
  "AGENTS.md",
  "SYSTEM.md",
] as const;
export type BootstrapFileName = (typeof bootstrapFileNames)[number];

export interface BootstrapFile {
  name: BootstrapFileName;
  path: string;
  /** Undefined when missing or blank (or only HTML comments). */
  content?: string;
}

/** Reads IDENTITY.md, SOUL.md, USER.md, AGENTS.md and SYSTEM.md from `<home>`, fresh. */
export function readBootstrapFiles(home: string, refused?: Refused): BootstrapFile[] {
  return bootstrapFileNames.map((name) => {
    const path = join(home, name);
    const content = readTextFile(path, home, refused);
    return { name, path, ...(content ? { content } : {}) };
  });
}
