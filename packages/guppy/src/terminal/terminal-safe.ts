/**
 * Characters a terminal acts on rather than shows: C0 controls (line breaks, ESC, BEL, NUL), DEL,
 * C1 controls, and the bidirectional overrides and isolates that reorder what follows.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/**
 * `text` with every character a terminal would act on written out as an escape (`\n`, `\x1b`,
 * `\u202e`), so one line stays one line and shows what it holds: a thread id, a prompt or a
 * model's or tool's text from a remote user can neither split a log line (nor fake one) nor send
 * the operator's terminal control sequences (clear the screen, set the title).
 */
export function terminalSafe(text: string): string {
  return escapeUnsafe(text, UNSAFE);
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const UNSAFE_IN_TEXT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * As terminalSafe, but line breaks (CRLF too) and tabs stay: for a model's streamed answer, whose
 * lines are its own, in the interactive chat.
 */
export function terminalSafeText(text: string): string {
  // A CRLF line end is a line end (a Windows file's lines), not a carriage return to show.
  return escapeUnsafe(text.includes("\r\n") ? text.replace(/\r\n/g, "\n") : text, UNSAFE_IN_TEXT);
}

function escapeUnsafe(text: string, unsafe: RegExp): string {
  unsafe.lastIndex = 0;
  if (!unsafe.test(text)) return text;
  return text.replace(unsafe, (c) => {
    const named = NAMED[c];
    if (named) return named;
    const code = c.charCodeAt(0);
    return code <= 0xff
      ? `\\x${code.toString(16).padStart(2, "0")}`
      : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}
