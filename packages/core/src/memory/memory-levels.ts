import { join } from "node:path";
import { readTextFile } from "./read-text-file.js";
import { type Scope, scopeDirs } from "./scope-dirs.js";

export interface MemoryLevel {
  scope: Scope;
  /** Heading used in the system prompt, e.g. "Transport Memory (telegram)". */
  title: string;
  /** What the level is for, told to the agent so it picks the narrowest that fits. */
  purpose: string;
  /** Host path of the level's MEMORY.md (it may not exist yet). */
  path: string;
  /** The file's text; undefined when missing or blank. */
  content?: string;
}

/**
 * The thread's three memory files (global, transport, channel), read fresh from disk on every
 * call: the runner calls this before each run, so what the agent wrote last time is seen next time.
 */
export function readMemoryLevels(home: string, threadId: string): MemoryLevel[] {
  return scopeDirs(home, threadId).map(({ scope, dir, label }) => {
    const path = join(dir, "MEMORY.md");
    const content = readTextFile(path);
    const detail = label.includes("(") ? label.slice(label.indexOf("(")) : "";
    const title = `${scope[0]?.toUpperCase()}${scope.slice(1)} Memory${detail ? ` ${detail}` : ""}`;
    return { scope, title, purpose: purposes[scope], path, ...(content ? { content } : {}) };
  });
}

const purposes: Record<Scope, string> = {
  global: "facts and preferences that hold everywhere",
  transport: "conventions and knowledge for every chat on this platform",
  channel: "context of this channel only: its people, projects, ongoing work",
};
