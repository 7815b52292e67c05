import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";

/** Resolves a path given by the model: `~` is the user's home, relative paths are against the workspace. */
export function resolveToolPath(workspaceDir: string, path: string): string {
  const trimmed = path.trim();
  if (trimmed === "~") return homedir();
  if (trimmed.startsWith("~/")) return join(homedir(), trimmed.slice(2));
  return isAbsolute(trimmed) ? resolve(trimmed) : resolve(workspaceDir, trimmed);
}
