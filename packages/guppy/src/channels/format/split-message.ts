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

/** The last line start (inside a code block or not) where a cut leaves room to close the block. */
function lineCut(starts: ReturnType<typeof lineStarts>, budget: number): number | undefined {
  return [...starts]
    .reverse()
    .find((s) => s.at > 1 && s.at - 1 + (s.fence ? s.fence.length + 1 : 0) <= budget)?.at;
}

/** One long line: a cut at its last space in the second half of `room`, else at `room`. */
function spaceOrAnywhere(text: string, room: number): number {
  const space = text.lastIndexOf(" ", room - 1);
  return space > room / 2 ? space + 1 : safeCut(text, room);
}

/** Never cut between the two halves of a surrogate pair. */
function safeCut(text: string, at: number): number {
  const code = text.charCodeAt(at - 1);
  return code >= 0xd800 && code <= 0xdbff ? at - 1 : at;
}

/** Where a code block opening at `from` ends in `text` (after its closing fence line, else the end). */
function codeBlockEnd(text: string, from: number): number {
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

/** One part cut off the front of `rest`, the text after it and the code block left open. */
interface Cut {
  part: MessagePart;
  rest: string;
  open: Fence | undefined;
}

/**
 * Cuts the first part (at most `limit` characters as rendered by renderPart) off `rest`, which
 * starts inside `open` (undefined: outside any code block) and is longer than that. Preferred,
 * in order: a paragraph break in the second half of the window; when the window ends in a code
 * block, the line break before it if the block fits in a part of its own (so it is not cut), else
 * a line break inside it (the block is closed and reopened in the next part); otherwise a line
 * break, else a space, in the second half; else the last line break (inside a code block if
 * there is none outside); else anywhere (one long word; never inside a surrogate pair).
 */
function cutPart(rest: string, open: Fence | undefined, limit: number): Cut {
  const reopen = open ? open.line : "";
  const budget = limit - (reopen ? reopen.length + 1 : 0);
  const starts = lineStarts(rest, budget, open);
  const outside = starts.filter((s) => !s.fence && s.at > 1);
  const last = outside[outside.length - 1];
  const para = [...outside].reverse().find((s) => s.blankBefore);
  const inside = fenceAfter(rest.slice(0, budget), open);
  const half = budget / 2;
  let cut: number;
  if (para && para.at >= half) cut = para.at;
  else if (inside) {
    const blockStart = last?.at ?? 0;
    if (last && codeBlockEnd(rest, blockStart) - blockStart <= budget) cut = last.at;
    else {
      const room = budget - inside.length - 1;
      const line = [...starts].reverse().find((s) => s.at <= room && s.at > 1);
      cut = line ? line.at : spaceOrAnywhere(rest, room);
    }
  } else if (last && last.at >= half) cut = last.at;
  else {
    const space = rest.lastIndexOf(" ", budget - 1);
    if (space >= half) cut = space + 1;
    else cut = last?.at ?? lineCut(starts, budget) ?? spaceOrAnywhere(rest, budget);
  }
  const fenceAtCut = fenceAfter(rest.slice(0, cut), open);
  const body = rest.slice(0, cut).replace(/\n+$/, "");
  const close = fenceAtCut ? fenceAtCut.char.repeat(fenceAtCut.length) : "";
  const after = rest.slice(cut);
  return {
    part: { body, reopen, close },
    rest: fenceAtCut ? after : after.replace(/^\n+/, ""),
    open: fenceAtCut,
  };
}

/**
 * Splits Markdown into parts of at most `limit` characters, at paragraph boundaries, else line
 * boundaries, else spaces; never inside a code block unless the block alone is longer than a
 * part, in which case it is closed and reopened across parts (see cutPart).
 */
export function splitMessageParts(text: string, limit: number): MessagePart[] {
  if (limit < 16) throw new RangeError("split limit must be at least 16 characters");
  const parts: MessagePart[] = [];
  let rest = text;
  let open: Fence | undefined;
  while (rest !== "") {
    const reopen = open ? open.line : "";
    if ((reopen ? reopen.length + 1 : 0) + rest.length <= limit) {
      parts.push({ body: rest, reopen, close: "" });
      break;
    }
    const cut = cutPart(rest, open, limit);
    parts.push(cut.part);
    ({ rest, open } = cut);
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
 * MarkdownV2 escaping makes text longer): each part is packed greedily — the longest cut (by
 * cutPart's rules) whose rendering still fits — so a reply takes about as few messages as it can.
 * The cut is searched for by its raw length, guessed from how much the rendering grew so far.
 */
export function splitMessage(
  text: string,
  limit: number,
  render: (markdown: string) => string = (s) => s,
): string[] {
  if (limit < 16) throw new RangeError("split limit must be at least 16 characters");
  const out: string[] = [];
  const size = (part: MessagePart): number => render(renderPart(part)).length;
  /** Rendered length per raw character, as last measured. */
  let growth = 1;
  let rest = text;
  let open: Fence | undefined;
  while (rest !== "") {
    const reopen = open ? open.line : "";
    const whole: MessagePart = { body: rest, reopen, close: "" };
    const raw = renderPart(whole).length;
    if (raw * growth <= limit * 1.25) {
      const measured = size(whole);
      if (measured <= limit) {
        out.push(renderPart(whole));
        break;
      }
      growth = measured / raw;
    }
    const cut = packPart(rest, open, limit, growth, size);
    out.push(renderPart(cut.part));
    growth = cut.growth;
    ({ rest, open } = cut);
  }
  return out.filter((p) => p.trim() !== "");
}

/**
 * The longest first part of `rest` that fits `limit` once rendered: cuts are tried at raw
 * budgets guessed from the growth measured, narrowed like a bisection — a few renders a part.
 */
function packPart(
  rest: string,
  open: Fence | undefined,
  limit: number,
  growth: number,
  size: (part: MessagePart) => number,
): Cut & { growth: number } {
  const floor = (open ? open.line.length + 1 : 0) + 16;
  // Budgets that give the same cut give the same size: each cut is measured once.
  const sizes = new Map<number, number>();
  const measure = (cut: Cut): number => {
    const known = sizes.get(cut.rest.length) ?? size(cut.part);
    sizes.set(cut.rest.length, known);
    return known;
  };
  let best: (Cut & { growth: number }) | undefined;
  let fits = 0;
  let tooLong = rest.length;
  let budget = Math.max(floor, Math.min(rest.length - 1, Math.floor(limit / growth)));
  for (let tries = 0; tries < 12; tries++) {
    const cut = cutPart(rest, open, budget);
    const length = renderPart(cut.part).length;
    const measured = measure(cut);
    let next: number;
    if (measured <= limit) {
      fits = Math.max(fits, budget);
      if (!best || cut.rest.length < best.rest.length) {
        best = { ...cut, growth: measured / Math.max(1, length) };
      }
      if (measured >= limit * 0.97) break;
      next = Math.max(budget + 1, Math.floor((length * limit) / measured));
    } else {
      // Any budget down to this cut's own length gives this cut (or a longer one).
      tooLong = Math.min(tooLong, Math.max(length, floor));
      next = Math.floor((length * limit * 0.99) / measured);
    }
    if (next <= fits || next >= tooLong) next = Math.floor((fits + tooLong) / 2);
    if (next <= fits || next >= tooLong || tooLong - fits <= Math.max(8, fits / 100)) break;
    budget = Math.max(floor, next);
  }
  // Nothing fitted yet (the guesses stayed too long): halve until something does.
  for (let b = Math.min(budget, tooLong); !best; b = Math.max(floor, Math.floor(b / 2))) {
    const cut = cutPart(rest, open, b);
    const measured = measure(cut);
    if (measured <= limit || b <= floor) {
      best = { ...cut, growth: measured / Math.max(1, renderPart(cut.part).length) };
    }
  }
  return best;
}
