/** The terminal's bracketed-paste markers: it wraps a paste in them once asked to (`?2004h`). */
export const PASTE_START = "\x1b[200~";
export const PASTE_END = "\x1b[201~";
export const BRACKETED_PASTE_ON = "\x1b[?2004h";
export const BRACKETED_PASTE_OFF = "\x1b[?2004l";

/**
 * A line that is a chat command (`/exit`, `/status now`) — not `//` or a path like `/etc/hosts` —
 * or a plain `exit` / `quit`, which leave as `/exit` does.
 */
const commandLine = /^(?:\/\w+(?:\s|$)|\s*(?:exit|quit)\s*$)/;

/** `exit` or `quit` typed alone on the line: the chat ends, as with `/exit`. */
export function isPlainExit(text: string): boolean {
  return /^\s*(?:exit|quit)\s*$/.test(text);
}

export interface PromptAssembler {
  /**
   * A line readline submitted. Paste markers inside it (input that is not a terminal: readline
   * leaves them in the text) count as the paste starting or ending there.
   */
  line(text: string): void;
  /** The terminal's paste-start key (readline's `paste-start` keypress). */
  pasteStart(): void;
  /** The terminal's paste-end key; `editorEmpty` when nothing is left on the line being edited. */
  pasteEnd(editorEmpty: boolean): void;
  /** Input ended: what was collected goes out (`keepHeld: false` drops an unfinished paste). */
  end(keepHeld: boolean): void;
  /** Drops the lines of a paste not sent yet (Ctrl+C); how many there were. */
  drop(): number;
  /** Lines of a paste are held until the line being edited is sent. */
  readonly holding: boolean;
}

/**
 * Turns readline's lines into prompts as the user meant them: one paste is one prompt, its lines
 * and indentation as pasted. Inside a bracketed paste no line is sent; when the paste ends with a
 * line break it goes out, otherwise its last line stays in the editor and Enter sends it all.
 * Without the markers, lines that arrived in one turn of the event loop (one chunk of input; a
 * person cannot press Enter twice within one) are one prompt, except that a command line
 * (`/exit`, or a plain `exit` or `quit`) ends such a group and goes out alone, so piped
 * `hi\n/exit\n` still runs `hi`, then exits. `emit` gets the text with blank lines around it and trailing whitespace removed.
 */
export function createPromptAssembler(options: {
  emit: (text: string) => void;
  /** Runs `fn` once the current turn's input is read (setImmediate; a test passes its own). */
  defer?: (fn: () => void) => void;
}): PromptAssembler {
  const defer = options.defer ?? ((fn: () => void) => setImmediate(fn));
  let group: string[] = [];
  let groupScheduled = false;
  let held: string[] = [];
  let pasting = false;

  const send = (lines: string[]) => {
    if (lines.length === 0) return;
    options.emit(
      lines
        .join("\n")
        .replace(/^(?:[ \t]*\r?\n)+/, "")
        .trimEnd(),
    );
  };
  const flushGroup = () => {
    const lines = group;
    group = [];
    send(lines);
  };
  const flushHeld = () => {
    const lines = held;
    held = [];
    send(lines);
  };

  // One line with its markers taken out, as events in the order they came.
  const submit = (text: string) => {
    if (pasting) {
      held.push(text);
      return;
    }
    if (held.length > 0) {
      held.push(text);
      flushHeld();
      return;
    }
    if (commandLine.test(text)) {
      flushGroup();
      send([text]);
      return;
    }
    group.push(text);
    if (!groupScheduled) {
      groupScheduled = true;
      defer(() => {
        groupScheduled = false;
        flushGroup();
      });
    }
  };

  const assembler: PromptAssembler = {
    line(text) {
      let rest = text;
      let editor = "";
      for (;;) {
        const start = rest.indexOf(PASTE_START);
        const end = rest.indexOf(PASTE_END);
        const at = start < 0 ? end : end < 0 ? start : Math.min(start, end);
        if (at < 0) break;
        editor += rest.slice(0, at);
        if (at === start) assembler.pasteStart();
        else assembler.pasteEnd(editor === "");
        rest = rest.slice(at + (at === start ? PASTE_START.length : PASTE_END.length));
      }
      submit(editor + rest);
    },
    pasteStart() {
      flushGroup();
      pasting = true;
    },
    pasteEnd(editorEmpty) {
      pasting = false;
      if (editorEmpty) flushHeld();
    },
    end(keepHeld) {
      flushGroup();
      if (keepHeld) flushHeld();
      held = [];
      pasting = false;
    },
    drop() {
      const count = held.length;
      held = [];
      pasting = false;
      return count;
    },
    get holding() {
      return pasting || held.length > 0;
    },
  };
  return assembler;
}
