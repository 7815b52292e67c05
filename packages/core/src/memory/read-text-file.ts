import { readFileSync } from "node:fs";

/**
 * A Markdown file's text, or undefined when it is missing, unreadable or blank. A file holding
 * only HTML comments (the templates `guppy init` writes) counts as blank.
 */
export function readTextFile(path: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
  if (text.replace(/<!--[\s\S]*?-->/g, "").trim() === "") return undefined;
  return text.replace(/\r\n/g, "\n").trimEnd();
}
