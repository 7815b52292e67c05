import { type Stats, statSync } from "node:fs";

/**
 * The stat of what is at `path` (symlinks followed), or undefined when there is nothing there
 * (or it cannot be looked at). Anything but a regular file is refused with a one-line error
 * naming what it is, before anything opens it: opening a FIFO waits for a writer, and reading a
 * device such as /dev/zero or /dev/stdin may never end — either would block the thread every
 * agent runs on, where not even SIGTERM is handled any more.
 */
export function regularFileStat(path: string, tool: string): Stats | undefined {
  let stat: Stats;
  try {
    stat = statSync(path);
  } catch {
    return undefined;
  }
  if (stat.isDirectory()) throw new Error(`${path} is a directory, not a file.`);
  if (!stat.isFile()) {
    throw new Error(
      `${path} is ${kindOf(stat)}, not a regular file; ${tool} works on regular files only.`,
    );
  }
  return stat;
}

function kindOf(stat: Stats): string {
  if (stat.isFIFO()) return "a FIFO (named pipe)";
  if (stat.isSocket()) return "a socket";
  if (stat.isCharacterDevice()) return "a character device";
  if (stat.isBlockDevice()) return "a block device";
  return "a special file";
}
