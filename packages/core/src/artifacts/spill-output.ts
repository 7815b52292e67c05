import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface SpillResult {
  /** What goes into the context: the text itself, or a head+tail excerpt with a note. */
  text: string;
  /** Where the full output was saved, when it was too long (and could be saved). */
  path?: string;
}

let sequence = 0;

/** A new file name under `dir` for one saved output of the tool `label`. */
export function artifactPath(dir: string, label: string): string {
  sequence = (sequence + 1) % 1000;
  return join(dir, `${label}-${Date.now()}-${String(sequence).padStart(3, "0")}.txt`);
}

/**
 * Keeps text up to `maxChars` as is. Longer text is saved whole under `dir` and replaced by its
 * head and tail (the end of an output is usually where errors and results are) with a note that
 * gives the saved file's path, which the `read` tool can page through. A file that cannot be
 * written (a full disk) is removed, and the note says why nothing was saved.
 */
export function spillOutput(options: {
  text: string;
  maxChars: number;
  /** The artifacts directory, asked for (and made) only when the text is too long. */
  dir: () => string;
  label: string;
}): SpillResult {
  const { text, maxChars } = options;
  if (text.length <= maxChars) return { text };
  let path: string | undefined;
  try {
    path = artifactPath(options.dir(), options.label);
    writeFileSync(path, text, "utf8");
  } catch (error) {
    if (path) rmSync(path, { force: true });
    const reason = error instanceof Error ? error.message : String(error);
    return { text: excerptHeadTail(text, maxChars, { error: reason }) };
  }
  return { text: excerptHeadTail(text, maxChars, path), path };
}

/** Lines as `read` counts them: pieces between newlines, a last newline not starting another. */
export function countLines(text: string): number {
  let lines = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) lines++;
  return text === "" || text.endsWith("\n") ? lines : lines + 1;
}

/** How many chars of its head and of its tail an excerpt within about `maxChars` shows. */
export function excerptLengths(maxChars: number): { head: number; tail: number } {
  const budget = Math.max(100, maxChars - 300);
  const head = Math.floor(budget * 0.4);
  return { head, tail: budget - head };
}

/**
 * Head and tail of `text` within about `maxChars`, with a note naming what was left out: where
 * the whole text was saved, or why it could not be.
 */
export function excerptHeadTail(
  text: string,
  maxChars: number,
  saved?: string | { error: string },
): string {
  const size = () => `${text.length} chars, ${countLines(text)} lines`;
  const where =
    saved === undefined
      ? ""
      : typeof saved === "string"
        ? ` The full output (${size()}) is saved at ${saved}; read it with the read tool (offset/limit) if you need the middle.`
        : ` The full output (${size()}) could not be saved: ${saved.error}.`;
  const lengths = excerptLengths(maxChars);
  const head = text.slice(0, lengths.head);
  const tail = text.slice(text.length - lengths.tail);
  const omitted = text.length - lengths.head - lengths.tail;
  return `${head}\n\n[... ${omitted} chars omitted ...${where}]\n\n${tail}`;
}
