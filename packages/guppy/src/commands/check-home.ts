import { statSync } from "node:fs";
import { dirname } from "node:path";
import { UsageError } from "../cli/cli-error.js";
import type { CliArgs } from "../cli/parse-cli-args.js";
import { homeModeWarning } from "./home-permissions.js";

/**
 * Refuses a data directory that cannot be one — it, or the nearest part of its path that exists,
 * is a file — with one line naming the path, rather than the first EEXIST or ENOTDIR a command
 * runs into. A path that does not exist yet is fine: it is created when needed. A home open to
 * others gets its one warning line here, at the start of every command that uses it (not
 * `guppy doctor`'s: `warnLoose` false, its own line says so).
 */
export function checkHome(home: string, args: Pick<CliArgs, "home">, warnLoose = true): void {
  const name = args.home !== undefined ? "--home" : "GUPPY_HOME";
  for (let path = home; ; path = dirname(path)) {
    let isDirectory: boolean;
    try {
      isDirectory = statSync(path).isDirectory();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR") {
        if (dirname(path) === path) return;
        continue;
      }
      return; // unreadable (EACCES, ...): the command's own error says so
    }
    if (isDirectory) {
      const loose = path === home && warnLoose ? homeModeWarning(home) : undefined;
      if (loose) process.stderr.write(`guppy: warning: ${loose}\n`);
      return;
    }
    throw new UsageError(
      path === home
        ? `${name} ${home} is not a directory`
        : `${name} ${home} cannot be created: ${path} is not a directory`,
    );
  }
}
