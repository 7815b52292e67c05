import { join } from "node:path";
import { readTextFile } from "../memory/read-text-file.js";

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
export function readBootstrapFiles(home: string): BootstrapFile[] {
  return bootstrapFileNames.map((name) => {
    const path = join(home, name);
    const content = readTextFile(path);
    return { name, path, ...(content ? { content } : {}) };
  });
}
