import { readFileFresh } from "./read-cache.js";

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
  if (text === undefined) return undefined;
  if (text.replace(/<!--[\s\S]*?-->/g, "").trim() === "") return undefined;
  return text.replace(/\r\n/g, "\n").trimEnd();
}
