import {
  closeSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { StringDecoder } from "node:string_decoder";
import type { AfterToolCallContext, AfterToolCallResult } from "@mariozechner/pi-agent-core";
import type { Redactor } from "../logging/redact.js";
import type { OutputOverflow } from "../sandbox/exec.js";

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
 * written (a full disk) is removed, and the note says why nothing was saved. With a `redactor`,
 * configured secrets are taken out of the whole text before it is saved or cut: a cut through a
 * secret would leave halves no later redaction recognises.
 */
export function spillOutput(options: {
  text: string;
  maxChars: number;
  /** The artifacts directory, asked for (and made) only when the text is too long. */
  dir: () => string;
  label: string;
  redactor?: Redactor;
}): SpillResult {
  const { maxChars, redactor } = options;
  const text = redactor ? redactor.text(options.text) : options.text;
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

/**
 * The excerpt of a command output too long to hold in memory (the sandbox kept its `head` and
 * its tail and streamed it to a file): its real first and last chars within about `maxChars`,
 * and a note giving its true size and the file that holds it — or how much of it, or why none.
 * With a `redactor`, the excerpt's borders leave out a secret they would cut through (counted
 * as omitted), and the secrets within it are redacted; the saved file is redacted afterwards
 * (the tool-result hook, createToolResultSpill).
 */
export function overflowExcerpt(
  head: string,
  overflow: OutputOverflow,
  maxChars: number,
  redactor?: Redactor,
): SpillResult {
  const lengths = excerptLengths(maxChars);
  let shownHead = head.slice(0, lengths.head);
  let shownTail = overflow.tail.slice(Math.max(0, overflow.tail.length - lengths.tail));
  if (redactor?.active) {
    shownHead = shownHead.slice(0, shownHead.length - redactor.splitSecret(shownHead, "end"));
    shownTail = shownTail.slice(redactor.splitSecret(shownTail, "start"));
  }
  const omitted = overflow.totalBytes - Buffer.byteLength(shownHead) - Buffer.byteLength(shownTail);
  if (redactor?.active) {
    shownHead = redactor.text(shownHead);
    shownTail = redactor.text(shownTail);
  }
  const size = `${overflow.totalBytes} bytes, ${overflow.lines} lines`;
  const { file } = overflow;
  let where: string;
  if (file?.cut) {
    where =
      ` The output (${size}) was too long to save whole: ${file.path} holds its first ` +
      `${file.cut.headBytes} bytes, then a line saying how many bytes were left out, then its ` +
      `last ${file.cut.tailBytes} bytes; read it with the read tool (offset/limit) if you need more.`;
  } else if (file) {
    where = ` The full output (${size}) is saved at ${file.path}; read it with the read tool (offset/limit) if you need the middle.`;
  } else {
    where = ` The full output (${size}) could not be saved: ${overflow.fileError ?? "no file was given"}.`;
  }
  return {
    text: `${shownHead}\n\n[... ${omitted} bytes omitted ...${where}]\n\n${shownTail}`,
    ...(file ? { path: file.path } : {}),
  };
}

/**
 * The `afterToolCall` hook that applies GUPPY_TOOL_RESULT_MAX_CHARS to every tool's result: a
 * longer text goes into the context as a head+tail excerpt whose note names the file (under
 * the thread's artifacts/) holding all of it, which `read` pages through. Tools that already
 * spilled their own output (bash; `details.fullOutputPath`) are left alone, and so is `read`,
 * which pages by itself (its page plus a "continue with offset=" line must not be spilled into
 * yet another file to read), and `read_url`, whose max_chars is its own limit.
 */
// read_url cuts its own text at its max_chars (default 50,000) and saves the rest itself.
const selfPaging = new Set(["read", "read_url"]);

export function createToolResultSpill(options: {
  maxChars: number;
  artifactsDir: () => string;
  /** Configured secrets are taken out of every result first, and out of a tool's saved output. */
  redactor?: Redactor;
}): (ctx: AfterToolCallContext) => Promise<AfterToolCallResult | undefined> {
  const { redactor } = options;
  return async ({ toolCall, result }) => {
    const redacted = redactor?.active ? redactResult(result, redactor) : undefined;
    const spilled = spill(toolCall.name, redacted ?? result, options);
    return spilled ?? redacted;
  };
}

function spill(
  tool: string,
  result: AfterToolCallContext["result"],
  options: { maxChars: number; artifactsDir: () => string },
): AfterToolCallResult | undefined {
  if (selfPaging.has(tool)) return undefined;
  const details = result.details as { fullOutputPath?: unknown } | undefined;
  if (details && typeof details === "object" && details.fullOutputPath) return undefined;
  const blocks = result.content;
  const text = blocks
    .filter((b): b is { type: "text"; text: string } => b.type === "text")
    .map((b) => b.text)
    .join("\n");
  if (text.length <= options.maxChars) return undefined;
  const spilled = spillOutput({
    text,
    maxChars: options.maxChars,
    dir: options.artifactsDir,
    label: tool.replace(/[^A-Za-z0-9_-]/g, "_"),
  });
  return {
    content: [{ type: "text", text: spilled.text }, ...blocks.filter((b) => b.type !== "text")],
    details: {
      ...(details && typeof details === "object" ? details : {}),
      fullOutputPath: spilled.path,
    },
  };
}

/**
 * The result with configured secrets replaced in its text, or undefined when it held none. A
 * file the tool saved its whole output to (bash) is rewritten redacted too: the model can read it.
 */
function redactResult(
  result: AfterToolCallContext["result"],
  redactor: Redactor,
): AfterToolCallContext["result"] | undefined {
  const details = result.details as { fullOutputPath?: unknown } | undefined;
  const path = details && typeof details === "object" ? details.fullOutputPath : undefined;
  if (typeof path === "string") redactFile(path, redactor);
  const content = redactor.value(result.content);
  return content === result.content ? undefined : { ...result, content };
}

/**
 * Rewrites a saved output with configured secrets replaced, a piece at a time (it may be a
 * gigabyte). A file gone or unreadable is left as it is.
 */
function redactFile(path: string, redactor: Redactor): void {
  const temp = `${path}.redacting`;
  let input: number | undefined;
  let output: number | undefined;
  try {
    input = openSync(path, "r");
    output = openSync(temp, "w");
    const stream = redactor.stream();
    const decoder = new StringDecoder("utf8");
    const chunk = Buffer.alloc(1024 * 1024);
    for (let n = readSync(input, chunk); n > 0; n = readSync(input, chunk)) {
      writeSync(output, stream.push(decoder.write(chunk.subarray(0, n))));
    }
    writeSync(output, stream.push(decoder.end()) + stream.end());
    closeSync(output);
    output = undefined;
    renameSync(temp, path);
  } catch {
    // Left as it was.
  } finally {
    if (input !== undefined) closeSync(input);
    if (output !== undefined) closeSync(output);
    rmSync(temp, { force: true });
  }
}
