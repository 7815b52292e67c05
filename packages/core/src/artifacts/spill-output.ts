import { writeFileSync } from "node:fs";
import { join } from "node:path";

export interface SpillResult {
  /** What goes into the context: the text itself, or a head+tail excerpt with a note. */
  text: string;
  /** Where the full output was saved, when it was too long. */
  path?: string;
}

let sequence = 0;

/**
 * Keeps text up to `maxChars` as is. Longer text is saved whole under `dir` and replaced by its
 * head and tail (the end of an output is usually where errors and results are) with a note that
 * gives the saved file's path, which the `read` tool can page through.
 */
export function spillOutput(options: {
  text: string;
  maxChars: number;
  dir: string;
  label: string;
}): SpillResult {
  const { text, maxChars } = options;
  if (text.length <= maxChars) return { text };
  sequence = (sequence + 1) % 1000;
  const name = `${options.label}-${Date.now()}-${String(sequence).padStart(3, "0")}.txt`;
  const path = join(options.dir, name);
  writeFileSync(path, text, "utf8");
  return { text: excerptHeadTail(text, maxChars, path), path };
}

/** Head and tail of `text` within about `maxChars`, with a note naming what was left out. */
export function excerptHeadTail(text: string, maxChars: number, savedPath?: string): string {
  const lines = text.split("\n").length;
  const where = savedPath
    ? ` The full output (${text.length} chars, ${lines} lines) is saved at ${savedPath}; read it with the read tool (offset/limit) if you need the middle.`
    : "";
  const budget = Math.max(100, maxChars - 300);
  const headLen = Math.floor(budget * 0.4);
  const tailLen = budget - headLen;
  const head = text.slice(0, headLen);
  const tail = text.slice(text.length - tailLen);
  const omitted = text.length - headLen - tailLen;
  return `${head}\n\n[... ${omitted} chars omitted ...${where}]\n\n${tail}`;
}
