import { lstatSync, readdirSync, type Stats, statSync } from "node:fs";
import { join } from "node:path";
import { NoFollowError, readNoFollow } from "../fs/no-follow.js";

/** Told of a file refused because it is a symlink or lies behind one (one line naming it). */
export type Refused = (line: string) => void;

/**
 * A Markdown file's text, or undefined when it is missing, unreadable or blank. A file holding
 * only HTML comments (the templates `guppy init` writes) counts as blank. `root` is the folder
 * the file belongs under (guppy's home): a symlink at the file or on the way to it from `root`
 * is refused (see readFileFresh) and `refused` is told.
 */
export function readTextFile(path: string, root: string, refused?: Refused): string | undefined {
  let text: string | undefined;
  try {
    text = readFileFresh(path, root);
  } catch (error) {
    if (error instanceof NoFollowError) refused?.(`refused ${error.message}`);
    return undefined;
  }
  if (text === undefined || onlyCommentsAndSpace(text)) return undefined;
  return text.replace(/\r\n/g, "\n").trimEnd();
}

const SPACE = /\s/;

/**
 * Whether the text is nothing but whitespace and closed `<!-- … -->` comments: one pass with
 * indexOf (a lazy regex rescans the text from every unclosed `<!--`).
 */
export function onlyCommentsAndSpace(text: string): boolean {
  let i = 0;
  while (i < text.length) {
    if (SPACE.test(text[i]!)) i++;
    else if (text.startsWith("<!--", i)) {
      const end = text.indexOf("-->", i + 4);
      if (end < 0) return false;
      i = end + 3;
    } else return false;
  }
  return true;
}

/**
 * The system prompt is rebuilt before every run from a dozen small files (identity, memory,
 * daily notes, skills) that rarely change. These reads keep each file's text (and each folder's
 * listing) and read it again only when its stat says it changed: one stat per file per run
 * instead of open + read + close, and no exception for a missing file.
 */
const MAX_ENTRIES = 4096;
const files = new Map<string, { stamp: string; text: string }>();
const folders = new Map<string, { stamp: string; subdirs: string[] }>();

const stampOf = (st: Stats) => `${st.mtimeMs}:${st.ctimeMs}:${st.size}:${st.ino}`;

/** Sets `key` as the newest entry of an insertion-ordered cache, dropping the oldest past `max`. */
export function remember<T>(cache: Map<string, T>, key: string, value: T, max = MAX_ENTRIES): void {
  cache.delete(key);
  cache.set(key, value);
  if (cache.size > max) {
    const oldest = cache.keys().next().value;
    if (oldest !== undefined) cache.delete(oldest);
  }
}

/**
 * A file's text, or undefined when there is no such file; throws when it cannot be read. These
 * files lie where a tool may write (memory, daily notes, skills), so they are read the way
 * `readNoFollow` reads: a symlink at the file, or a folder on the way from `root` swapped for
 * one, throws a NoFollowError instead of being followed to guppy's keys or another thread's log.
 */
export function readFileFresh(path: string, root: string): string | undefined {
  const st = lstatSync(path, { throwIfNoEntry: false });
  if (st?.isSymbolicLink()) {
    files.delete(path);
    throw new NoFollowError(path, "is a symlink, which is refused");
  }
  if (!st?.isFile()) {
    files.delete(path);
    return undefined;
  }
  const stamp = stampOf(st);
  const hit = files.get(path);
  if (hit?.stamp === stamp) return hit.text;
  const bytes = readNoFollow(root, path);
  if (bytes === undefined) {
    files.delete(path);
    return undefined;
  }
  const text = bytes.toString("utf8");
  remember(files, path, { stamp, text });
  return text;
}

/**
 * A folder's subdirectories (hidden ones skipped) in code-point order, the same on every machine;
 * [] when the folder is missing or unreadable. Adding, removing or renaming an entry changes the
 * folder's own stat, so that is what the cache checks.
 */
export function listSubdirsFresh(dir: string): string[] {
  const st = statSync(dir, { throwIfNoEntry: false });
  if (!st?.isDirectory()) {
    folders.delete(dir);
    return [];
  }
  const stamp = stampOf(st);
  const hit = folders.get(dir);
  if (hit?.stamp === stamp) return hit.subdirs;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const subdirs = names
    .filter((name) => !name.startsWith("."))
    .filter((name) => statSync(join(dir, name), { throwIfNoEntry: false })?.isDirectory() === true)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  remember(folders, dir, { stamp, subdirs });
  return subdirs;
}
