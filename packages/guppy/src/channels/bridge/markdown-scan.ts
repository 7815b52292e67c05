import { parseMarkdown } from "chat";

// What is open at an offset of Markdown text: a fenced code block, inline spans (bold, italic,
// strikethrough, code). split-message.ts cuts by it; reply-stream.ts continues a message by it.

export interface Fence {
  /** The opening line as written (`\`\`\`ts`), used to reopen the block in the next part. */
  line: string;
  char: "`" | "~";
  length: number;
}

const FENCE_RE = /^ {0,3}(`{3,}|~{3,})(.*)$/;

/** Whether `text` ends inside a fenced code block. */
export function endsInsideCodeBlock(text: string): boolean {
  return fenceAfter(text, undefined) !== undefined;
}

/**
 * What a message continuing `text` from offset `at` has to start with to read as it would have
 * there: the fence line reopening the code block open at `at` (with its newline), else the marks
 * of the bold, italic, strikethrough or code spans open at `at`, else "".
 */
export function reopenAt(text: string, at: number): string {
  const fence = fenceAfter(text.slice(0, at), undefined);
  if (fence) return `${fence.line}\n`;
  return spansAt(text, paragraphStart(text, at), at)
    .map((span) => span.mark)
    .join("");
}

/** An inline span (bold, italic, strikethrough, code) of a paragraph: where it starts and ends. */
export interface Span {
  start: number;
  end: number;
  /** The delimiter that opens and closes it, as written: `**`, `__`, `*`, `_`, `~~`, backticks. */
  mark: string;
}

/** The delimiter a span of mdast type `type` starts with in `source`, or "" for other nodes. */
function markOf(type: string, source: string): string {
  const mark =
    type === "strong"
      ? source.slice(0, 2)
      : type === "emphasis"
        ? source.slice(0, 1)
        : type === "delete"
          ? (/^~~?/.exec(source)?.[0] ?? "")
          : type === "inlineCode"
            ? (/^`+/.exec(source)?.[0] ?? "")
            : "";
  return /^(\*\*|__|\*|_|~~?|`+)$/.test(mark) ? mark : "";
}

/** Where the paragraph holding offset `at` starts: after the last blank line before it. */
function paragraphStart(text: string, at: number): number {
  const blank = /\n[ \t]*\n/g;
  const before = text.slice(0, at);
  let start = 0;
  for (let m = blank.exec(before); m; m = blank.exec(before)) start = m.index + m[0].length;
  return start;
}

/**
 * The inline spans of the paragraph from `from` in `text` that are open at `at` (begun before it,
 * ended after it), outermost first, as the chat SDK's Markdown parser (the one the adapters
 * render with) reads that paragraph.
 */
function spansAt(text: string, from: number, at: number): Span[] {
  const blank = /\n[ \t]*\n/.exec(text.slice(at));
  const paragraph = text.slice(from, blank ? at + blank.index : text.length);
  if (!/[*_~`]/.test(paragraph)) return [];
  const within = at - from;
  const spans: Span[] = [];
  const visit = (node: MdNode): void => {
    const start = node.position?.start.offset;
    const end = node.position?.end.offset;
    if (start === undefined || end === undefined || start >= within || end <= within) return;
    const mark = markOf(node.type, paragraph.slice(start, start + 64));
    if (mark) spans.push({ start: from + start, end: from + end, mark });
    for (const child of node.children ?? []) visit(child);
  };
  visit(parsed(paragraph));
  return spans;
}

// The cuts tried for one part mostly fall in the same paragraph: parse each once (~1 ms per KB).
const parses = new Map<string, MdNode>();
function parsed(paragraph: string): MdNode {
  const known = parses.get(paragraph);
  if (known) return known;
  if (parses.size >= 4) parses.clear();
  const root = parseMarkdown(paragraph) as MdNode;
  parses.set(paragraph, root);
  return root;
}

/** The parts of an mdast node spansAt reads. */
interface MdNode {
  type: string;
  position?: { start: { offset?: number }; end: { offset?: number } };
  children?: MdNode[];
}

/** Fence state after reading `text` from a state `start` (undefined: outside any code block). */
export function fenceAfter(text: string, start: Fence | undefined): Fence | undefined {
  let fence = start;
  for (const line of text.split("\n")) {
    const m = FENCE_RE.exec(line);
    if (!m) continue;
    const marker = m[1] ?? "";
    const char = marker[0] === "~" ? "~" : "`";
    if (!fence) {
      if (char === "`" && (m[2] ?? "").includes("`")) continue;
      fence = { line: line.trim(), char, length: marker.length };
    } else if (char === fence.char && marker.length >= fence.length && (m[2] ?? "").trim() === "") {
      fence = undefined;
    }
  }
  return fence;
}

/** Where a code block opening at `from` ends in `text` (after its closing fence line, else the end). */
export function codeBlockEnd(text: string, from: number): number {
  let fence: Fence | undefined;
  let pos = from;
  while (pos < text.length) {
    const nl = text.indexOf("\n", pos);
    const end = nl === -1 ? text.length : nl;
    fence = fenceAfter(text.slice(pos, end), fence);
    if (!fence) return end;
    pos = end + 1;
  }
  return text.length;
}

/** The inline spans a cut at `at` falls in, leaving out any it would cut through a mark of. */
export function spansCut(text: string, at: number): Span[] {
  return spansAt(text, paragraphStart(text, at), at).filter(
    (span) => at > span.start + span.mark.length && at < span.end - span.mark.length,
  );
}
