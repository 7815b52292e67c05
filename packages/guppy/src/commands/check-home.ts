import { statSync } from "node:fs";
import { dirname } from "node:path";
import { UsageError } from "../cli/cli-error.js";
import type { CliArgs } from "../cli/parse-cli-args.js";

/**
 * Refuses a data directory that cannot be one — it, or the nearest part of its path that exists,
 * is a file — with one line naming the path, rather than the first EEXIST or ENOTDIR a command
 * runs into. A path that does not exist yet is fine: it is created when needed.
 */
export function checkHome(home: string, args: Pick<CliArgs, "home">): void {
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
    if (isDirectory) return;
    throw new UsageError(
      path === home
        ? `${name} ${home} is not a directory`
        : `${name} ${home} cannot be created: ${path} is not a directory`,
    );
  }
}
