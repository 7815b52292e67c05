import { trimTrailingNewlines } from "@guppy/core/runner";
import { codeBlockEnd, type Fence, fenceAfter, spansCut } from "./markdown-scan.js";

/**
 * One part of a split message: its own text plus what is added to keep code blocks and inline
 * formatting whole across the cut.
 */
export interface MessagePart {
  /** A slice of the original text (newlines at the cut are dropped). */
  body: string;
  /** Fence line reopening a code block cut by the previous part (`\`\`\`ts`), or "". */
  reopen: string;
  /** Fence closing a code block this part cuts (`\`\`\``), or "". */
  close: string;
  /** Inline marks reopening the spans the previous part cut (`**`, `_`, `~~`, backticks), or "". */
  reopenMarks: string;
  /** Marks closing the inline spans this part cuts, innermost first, or "". */
  closeMarks: string;
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

/** What a part starts inside: the code block the previous part cut, or the inline spans it cut. */
interface Open {
  fence: Fence | undefined;
  /** Marks reopening the inline spans, outermost first. */
  marks: string;
}

const NOTHING_OPEN: Open = { fence: undefined, marks: "" };

/** `rest` as one last part, starting inside `open`. */
const wholePart = (rest: string, open: Open): MessagePart => ({
  body: rest,
  reopen: open.fence ? open.fence.line : "",
  close: "",
  reopenMarks: open.marks,
  closeMarks: "",
});

/** One part cut off the front of `rest`, the text after it and what it leaves open. */
interface Cut {
  part: MessagePart;
  rest: string;
  open: Open;
}

/**
 * Cuts the first part (at most `limit` characters as rendered by renderPart) off `rest`, which
 * starts inside `open` and is longer than that (see chooseCut for where). A code block the cut
 * falls in is closed and reopened in the next part; so are bold, italic, strikethrough and code
 * spans, with the marks they were written with (room for the closing marks is kept).
 */
function cutPart(rest: string, open: Open, limit: number): Cut {
  const prefix = open.fence ? open.fence.line.length + 1 : open.marks.length;
  let reserve = 0;
  for (let tries = 0; ; tries++) {
    const cut = chooseCut(rest, open.fence, limit - prefix - reserve);
    const fence = fenceAfter(rest.slice(0, cut), open.fence);
    const after = rest.slice(cut);
    const part: MessagePart = {
      body: trimTrailingNewlines(rest.slice(0, cut)),
      reopen: open.fence ? open.fence.line : "",
      close: fence ? fence.char.repeat(fence.length) : "",
      reopenMarks: open.marks,
      closeMarks: "",
    };
    const atParagraph = /\n[ \t]*\n$/.test(rest.slice(0, cut)) || /^[ \t]*\n/.test(after);
    const spans = fence || atParagraph ? [] : spansCut(open.marks + rest, open.marks.length + cut);
    const marks = spans.map((span) => span.mark);
    part.closeMarks = [...marks].reverse().join("");
    const fits = renderPart(part).length <= limit;
    if (fits || tries >= 2) {
      // Closing marks that still do not fit are left out: the text stays whole, unformatted.
      if (!fits) part.closeMarks = "";
      return {
        part,
        rest: fence ? after : after.replace(/^\n+/, ""),
        open: { fence, marks: fits ? marks.join("") : "" },
      };
    }
    reserve += part.closeMarks.length;
  }
}

/**
 * Where to cut the first part of at most `budget` characters off `rest`, which starts inside
 * `open` (undefined: outside any code block). Preferred, in order: a paragraph break in the
 * second half of the window; when the window ends in a code block, the line break before it if
 * the block fits in a part of its own (so it is not cut), else a line break inside it (leaving
 * room to close it); otherwise a line break, else a space, in the second half; else the last line
 * break (inside a code block if there is none outside); else anywhere (one long word; never
 * inside a surrogate pair).
 */
function chooseCut(rest: string, open: Fence | undefined, budget: number): number {
  const starts = lineStarts(rest, budget, open);
  const outside = starts.filter((s) => !s.fence && s.at > 1);
  const last = outside[outside.length - 1];
  const para = [...outside].reverse().find((s) => s.blankBefore);
  const inside = fenceAfter(rest.slice(0, budget), open);
  const half = budget / 2;
  if (para && para.at >= half) return para.at;
  if (inside) {
    const blockStart = last?.at ?? 0;
    if (last && codeBlockEnd(rest, blockStart) - blockStart <= budget) return last.at;
    const room = budget - inside.length - 1;
    const line = [...starts].reverse().find((s) => s.at <= room && s.at > 1);
    return line ? line.at : spaceOrAnywhere(rest, room);
  }
  if (last && last.at >= half) return last.at;
  const space = rest.lastIndexOf(" ", budget - 1);
  if (space >= half) return space + 1;
  return last?.at ?? lineCut(starts, budget) ?? spaceOrAnywhere(rest, budget);
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
  let open = NOTHING_OPEN;
  while (rest !== "") {
    const whole = wholePart(rest, open);
    if (renderPart(whole).length <= limit) {
      parts.push(whole);
      break;
    }
    const cut = cutPart(rest, open, limit);
    parts.push(cut.part);
    ({ rest, open } = cut);
  }
  return parts;
}

/** A part as it is posted: reopening fence or marks, body, closing marks or fence. */
export function renderPart(part: MessagePart): string {
  let out = part.reopenMarks + part.body;
  // A closing mark must follow the text directly (`**bold**`, not `**bold **`).
  if (part.closeMarks) out = out.trimEnd() + part.closeMarks;
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
  let open = NOTHING_OPEN;
  while (rest !== "") {
    const whole = wholePart(rest, open);
    const raw = renderPart(whole).length;
    if (raw <= limit || raw * growth <= limit * 1.25) {
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
  open: Open,
  limit: number,
  growth: number,
  size: (part: MessagePart) => number,
): Cut & { growth: number } {
  const floor = (open.fence ? open.fence.line.length + 1 : open.marks.length) + 16;
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
