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
