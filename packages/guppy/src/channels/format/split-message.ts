/** One part of a split message: its own text plus the fence lines added to keep code blocks whole. */
export interface MessagePart {
  /** A slice of the original text (newlines at the cut are dropped). */
  body: string;
  /** Fence line reopening a code block cut by the previous part (`\`\`\`ts`), or "". */
  reopen: string;
  /** Fence closing a code block this part cuts (`\`\`\``), or "". */
  close: string;
}

interface Fence {
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
 * there: the fence line reopening the code block open at `at` (with its newline), else "".
 */
export function reopenAt(text: string, at: number): string {
  const fence = fenceAfter(text.slice(0, at), undefined);
  return fence ? `${fence.line}\n` : "";
}

/** Fence state after reading `text` from a state `start` (undefined: outside any code block). */
function fenceAfter(text: string, start: Fence | undefined): Fence | undefined {
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

/** Start offsets of lines in `text` up to `max`, with the fence state in force at each. */
function lineStarts(text: string, max: number, start: Fence | undefined) {
  const out: Array<{ at: number; fence: Fence | undefined; blankBefore: boolean }> = [];
  let fence = start;
  let pos = 0;
  while (pos < text.length) {
    const nl = text.indexOf("\n", pos);
    const end = nl === -1 ? text.length : nl;
    fence = fenceAfter(text.slice(pos, end), fence);
    if (nl === -1 || nl + 1 > max) break;
    out.push({ at: nl + 1, fence, blankBefore: text[nl - 1] === "\n" || nl === pos });
    pos = nl + 1;
  }
  return out;
}

/** Never cut between the two halves of a surrogate pair. */
function safeCut(text: string, at: number): number {
  const code = text.charCodeAt(at - 1);
  return code >= 0xd800 && code <= 0xdbff ? at - 1 : at;
}

/**
 * Splits Markdown into parts of at most `limit` characters (as `measure` counts them), at
 * paragraph boundaries, else line boundaries, else spaces; never inside a code block unless the
 * block alone is longer than a part, in which case it is closed and reopened across parts.
 */
export function splitMessageParts(text: string, limit: number): MessagePart[] {
  if (limit < 16) throw new RangeError("split limit must be at least 16 characters");
  const parts: MessagePart[] = [];
  let rest = text;
  let open: Fence | undefined;
  while (true) {
    const reopen = open ? open.line : "";
    const prefixLen = reopen ? reopen.length + 1 : 0;
    if (prefixLen + rest.length <= limit) {
      parts.push({ body: rest, reopen, close: "" });
      break;
    }
    const budget = limit - prefixLen;
    const starts = lineStarts(rest, budget, open);
    // 1. a boundary outside code blocks: prefer a paragraph break in the second half of the window.
    const outside = starts.filter((s) => !s.fence && s.at > 1);
    let cut: number | undefined;
    const para = [...outside].reverse().find((s) => s.blankBefore);
    if (para && para.at >= budget / 2) cut = para.at;
    else if (outside.length > 0) cut = (outside[outside.length - 1] as { at: number }).at;
    if (cut === undefined) {
      // 2. inside a code block longer than a part: cut at a line, leaving room to close it.
      const inside = fenceAfter(rest.slice(0, budget), open);
      const reserve = inside ? inside.length + 1 : 0;
      const room = budget - reserve;
      const line = [...starts].reverse().find((s) => s.at <= room && s.at > 1);
      if (line) cut = line.at;
      else {
        // 3. one long line: cut at the last space, else anywhere (not inside a surrogate pair).
        const space = rest.lastIndexOf(" ", room - 1);
        cut = space > room / 2 ? space + 1 : safeCut(rest, room);
      }
    }
    const fenceAtCut = fenceAfter(rest.slice(0, cut), open);
    const body = rest.slice(0, cut).replace(/\n+$/, "");
    const close = fenceAtCut ? fenceAtCut.char.repeat(fenceAtCut.length) : "";
    parts.push({ body, reopen, close });
    rest = rest.slice(cut);
    if (!fenceAtCut) rest = rest.replace(/^\n+/, "");
    open = fenceAtCut;
    if (rest === "") break;
  }
  return parts;
}

/** A part as it is posted: reopening fence, body, closing fence. */
export function renderPart(part: MessagePart): string {
  let out = part.body;
  if (part.reopen) out = `${part.reopen}\n${out}`;
  if (part.close) out = `${out}\n${part.close}`;
  return out;
}

/**
 * Splits `text` for a platform whose limit applies to the rendered form (`render`, e.g. Telegram
 * MarkdownV2 escaping makes text longer): parts whose rendering is too long are split again finer.
 */
export function splitMessage(
  text: string,
  limit: number,
  render: (markdown: string) => string = (s) => s,
): string[] {
  const out: string[] = [];
  const visit = (chunk: string, chunkLimit: number, depth: number): void => {
    for (const part of splitMessageParts(chunk, chunkLimit).map(renderPart)) {
      const size = render(part).length;
      if (size <= limit || depth > 6 || chunkLimit <= 64) out.push(part);
      else visit(part, Math.max(64, Math.floor((chunkLimit * limit) / size) - 16), depth + 1);
    }
  };
  visit(text, limit, 0);
  return out.filter((p) => p.trim() !== "");
}
