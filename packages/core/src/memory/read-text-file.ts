import { readdirSync, readFileSync, type Stats, statSync } from "node:fs";
import { join } from "node:path";

/**
 * A Markdown file's text, or undefined when it is missing, unreadable or blank. A file holding
 * only HTML comments (the templates `guppy init` writes) counts as blank.
 */
export function readTextFile(path: string): string | undefined {
  let text: string | undefined;
  try {
    text = readFileFresh(path);
  } catch {
    return undefined;
  }
  if (text === undefined || onlyCommentsAndSpace(text)) return undefined;
  return text.replace(/\r\n/g, "\n").trimEnd();
}

const SPACE = /\s/;

/**
 * Whether the text is nothing but whitespace and closed `<!-- … -->` comments. One pass with
 * indexOf: the regex it replaces (`/<!--[\s\S]*?-->/g`) rescanned to the end of the text from
 * every unclosed `<!--`, so a file of many of them took seconds on the agents' thread.
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

/** A file's text, or undefined when there is no such file; throws when it cannot be read. */
export function readFileFresh(path: string): string | undefined {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st?.isFile()) {
    files.delete(path);
    return undefined;
  }
  const stamp = stampOf(st);
  const hit = files.get(path);
  if (hit?.stamp === stamp) return hit.text;
  const text = readFileSync(path, "utf8");
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
