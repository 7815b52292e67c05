import type { Styles } from "./ansi.js";
import { renderMarkdown } from "./markdown-ansi.js";

/**
 * An answer's Markdown rendered as it streams: the text shows at once as it comes, and each block
 * (a paragraph, a list, a heading, a code block) is redrawn rendered as soon as it is complete —
 * the cursor goes back up over its raw lines, erases them and writes the rendered ones. A block
 * that started mid-line, or that took more rows than the screen has (its top scrolled away), is
 * left as it came.
 */
export interface MarkdownStream {
  /** Answer text (terminal-safe already); `atLineStart`: the cursor is at a line's start. */
  push(text: string, atLineStart: boolean): void;
  /** The answer, or its part before a tool call or notice, ended: the rest is rendered. */
  end(): void;
}

export function createMarkdownStream(options: {
  /** Writes to the terminal (the chat renderer's own write, which tracks the line start). */
  write: (text: string) => void;
  styles: Styles;
  /** The terminal's size now (it may change while an answer streams). */
  size: () => { columns?: number; rows?: number };
}): MarkdownStream {
  const { write, styles } = options;
  /** Text shown raw since the last block was rendered. */
  let pending = "";
  /** The pending text did not start at a line's start: its rows cannot be counted. */
  let asItCame = false;

  const commit = (cut: number) => {
    const done = pending.slice(0, cut);
    const rest = pending.slice(cut);
    // A terminal that does not say its size (0: a pseudo-terminal nobody sized) is taken as 80×24.
    const { columns, rows } = options.size();
    if (!asItCame) {
      const up = rowsOf(pending, columns || 80) - 1;
      if (up < (rows || 24)) {
        write(`${up > 0 ? `\x1b[${up}A` : ""}\r\x1b[J`);
        write(renderMarkdown(done, styles));
        write(rest);
      }
    }
    pending = rest;
    // A cut is after a line break (or at the end): what is left starts a line.
    asItCame = false;
  };

  return {
    push(text, atLineStart) {
      if (text === "") return;
      if (pending === "") asItCame = !atLineStart;
      write(text);
      pending += text;
      const cut = completeBlocksEnd(pending);
      if (cut > 0) commit(cut);
    },
    end() {
      if (pending !== "") commit(pending.length);
    },
  };
}

/**
 * Where the complete blocks of `text` end (0: none is complete yet): after a blank line once the
 * next line has begun unindented (an indented one may continue a list item), after a code
 * block's closing fence, after an ATX heading's line. A blank line inside a fence ends nothing.
 */
export function completeBlocksEnd(text: string): number {
  const lines = text.split("\n");
  let cut = 0;
  let pos = 0;
  let fence: string | undefined;
  // The last element is the line still being written.
  for (let i = 0; i < lines.length - 1; i++) {
    const line = lines[i] ?? "";
    const end = pos + line.length + 1;
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence !== undefined) {
      if (
        marker &&
        marker[0] === fence[0] &&
        marker.length >= fence.length &&
        line.trim() === marker
      ) {
        fence = undefined;
        cut = end;
      }
    } else if (marker) {
      fence = marker;
    } else if (/^ {0,3}#{1,6}(?:\s|$)/.test(line)) {
      cut = end;
    } else if (line.trim() === "" && /^\S/.test(lines[i + 1] ?? "")) {
      cut = end;
    }
    pos = end;
  }
  return cut;
}

/** Terminal rows `text` takes from a line's start, the cursor's row included. */
export function rowsOf(text: string, columns: number): number {
  let rows = 0;
  for (const line of text.split("\n")) rows += Math.max(1, Math.ceil(displayWidth(line) / columns));
  return rows;
}

/** Columns `text` takes: wide (East Asian, emoji) characters two, combining marks none, tabs to the next stop. */
export function displayWidth(text: string): number {
  let width = 0;
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (char === "\t") width += 8 - (width % 8);
    else if (isZeroWidth(code)) continue;
    else width += isWide(code) ? 2 : 1;
  }
  return width;
}

function isZeroWidth(code: number): boolean {
  return (
    (code >= 0x300 && code <= 0x36f) ||
    (code >= 0x200b && code <= 0x200f) ||
    (code >= 0xfe00 && code <= 0xfe0f) ||
    (code >= 0x20d0 && code <= 0x20ff)
  );
}

function isWide(code: number): boolean {
  return (
    (code >= 0x1100 && code <= 0x115f) ||
    (code >= 0x2e80 && code <= 0xa4cf) ||
    (code >= 0xac00 && code <= 0xd7a3) ||
    (code >= 0xf900 && code <= 0xfaff) ||
    (code >= 0xfe30 && code <= 0xfe4f) ||
    (code >= 0xff00 && code <= 0xff60) ||
    (code >= 0xffe0 && code <= 0xffe6) ||
    (code >= 0x1f300 && code <= 0x1faff) ||
    (code >= 0x20000 && code <= 0x3fffd)
  );
}
