import { chmodSync, type Dirent, lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { WORKSPACE_DIR } from "@guppy/core/thread-layout";

// The home's promise (docs: permissions): only its owner can read it — the home and every
// directory 700, every file 600 — since it holds conversations, logs, keys and the usage ledger.

/** A path under the home that others (group or world) may read, write or enter. */
export interface LoosePath {
  path: string;
  /** Its permission bits (`0o644`). */
  mode: number;
  directory: boolean;
}

/** `755`, as `ls -l` users and chmod read it. */
export function octal(mode: number): string {
  return (mode & 0o777).toString(8).padStart(3, "0");
}

/**
 * The one warning a command that uses the home gives when the home itself is open to others,
 * or undefined (a private or missing home). Only the home: its mode guards everything in it,
 * and one line per file would bury the command's own output.
 */
export function homeModeWarning(home: string): string | undefined {
  let mode: number;
  try {
    const stat = lstatSync(home);
    if (!stat.isDirectory()) return undefined;
    mode = stat.mode & 0o777;
  } catch {
    return undefined;
  }
  if ((mode & 0o077) === 0) return undefined;
  return `${home} is readable by others (mode ${octal(mode)}): run guppy doctor --fix`;
}

/**
 * The home and everything in it that others may use, parents before children. Not followed:
 * symbolic links (a chmod would change their target, which may be anything). Not looked into:
 * the threads' workspaces (`scratch/`), where the tools' commands make the user's own files
 * under the user's umask. `unreadable`: directories that could not be listed.
 */
export function findLoosePaths(home: string): { loose: LoosePath[]; unreadable: string[] } {
  const loose: LoosePath[] = [];
  const unreadable: string[] = [];
  const visit = (path: string, top: boolean) => {
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) return;
    const directory = stat.isDirectory();
    if ((stat.mode & 0o077) !== 0) loose.push({ path, mode: stat.mode & 0o777, directory });
    if (!directory) return;
    let entries: Dirent[];
    try {
      entries = readdirSync(path, { withFileTypes: true });
    } catch {
      unreadable.push(path);
      return;
    }
    for (const entry of entries) {
      if (entry.isDirectory() && entry.name === WORKSPACE_DIR && !top) continue;
      try {
        visit(join(path, entry.name), false);
      } catch {
        // gone meanwhile (a running gateway's temp file): nothing to fix
      }
    }
  };
  visit(home, true);
  return { loose, unreadable };
}

/**
 * Takes the group's and others' bits off every loose path (`findLoosePaths`): the home and
 * directories become 700, files 600 (an owner's execute bit is kept: a skill's script stays
 * runnable). Returns what it changed, with the mode each had.
 */
export function fixPermissions(home: string): LoosePath[] {
  const { loose } = findLoosePaths(home);
  for (const entry of loose) chmodSync(entry.path, entry.mode & 0o700);
  return loose;
}
