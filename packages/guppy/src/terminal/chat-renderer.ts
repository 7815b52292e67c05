import type { Styles } from "./ansi.js";
import { createMarkdownStream } from "./markdown-stream.js";
import type { Spinner } from "./spinner.js";
import { terminalSafe, terminalSafeText } from "./terminal-safe.js";
import type { ThreadClientEvent } from "./thread-client.js";

/**
 * Shows a thread's events in the terminal: streamed text, a spinner while waiting, dim tool
 * lines, guppy's notices, messages guppy posted to the thread (send_message).
 *
 * A run may post its answer with send_message and end with the same text; a channel then posts
 * it once (`run_end.delivered`), and so does the terminal. The answer streams before its end
 * says so: text that so far repeats the message the run just showed is held back, shown as soon
 * as it differs (or at a tool call, or an end that did not deliver it), dropped at an end that
 * did.
 */
export function createChatRenderer(deps: {
  out: NodeJS.WritableStream;
  styles: Styles;
  spinner: Spinner;
  /** Rewords a provider's error (the terminal names an endpoint it could not reach). */
  explainError?: (message: string) => string;
  /**
   * A running tool's last output lines are shown under its line and redrawn as they change
   * (cursor movement: a terminal only). Off: `tool_output` events are not shown.
   */
  liveOutput?: boolean;
  /**
   * Answers are rendered as Markdown (markdown-stream.ts: each block redrawn once complete) on a
   * terminal of this size. Absent: answers are shown as written.
   */
  markdown?: { size: () => { columns?: number; rows?: number } };
}): (event: ThreadClientEvent) => void {
  const { out, styles, spinner } = deps;
  const explain = deps.explainError ?? ((message: string) => message);
  let atLineStart = true;
  const write = (text: string) => {
    if (text === "") return;
    out.write(text);
    atLineStart = text.endsWith("\n");
  };
  const markdown = deps.markdown
    ? createMarkdownStream({ write, styles, size: deps.markdown.size })
    : undefined;
  /** The answer's text, as it streams. */
  const answer = (text: string) => {
    if (markdown) markdown.push(text, atLineStart);
    else write(text);
  };
  /** The answer so far is complete (a line other than the answer's comes next, or the end). */
  const endAnswer = () => {
    flush();
    markdown?.end();
  };
  const line = (text: string) => {
    endAnswer();
    if (!atLineStart) write("\n");
    write(`${text}\n`);
  };
  /** The text of the run's latest message to this thread, while its answer may repeat it. */
  let shown: string | undefined;
  /** Streamed text held back: so far, a beginning of `shown`. */
  let held = "";
  const flush = () => {
    const text = held;
    held = "";
    answer(text);
  };
  /** Lines of live tool output on screen, right above the cursor's line. */
  let liveLines = 0;
  const clearLive = () => {
    if (liveLines === 0) return;
    // Up over them, then erase to the end of the screen: the next line takes their place.
    out.write(`\x1b[${liveLines}A\r\x1b[J`);
    liveLines = 0;
  };

  return (event) => {
    switch (event.type) {
      case "run_start":
        // A message shown before this run (another thread's, while idle) is not its answer.
        shown = undefined;
        break;
      case "thinking_start":
        spinner.start("thinking…");
        break;
      case "thinking_end":
        spinner.stop();
        break;
      case "text_delta": {
        spinner.stop();
        // What the model or a tool wrote reaches the terminal as text, never as control
        // sequences (a file a tool read could clear the screen or set the window's title).
        const text = terminalSafeText(event.delta);
        if (shown === undefined) answer(text);
        else {
          held += text;
          if (!shown.startsWith(held.trim())) {
            // Not the message again: shown now, and the rest of the answer streams as it comes.
            shown = undefined;
            flush();
          }
        }
        break;
      }
      case "tool_call":
        spinner.stop();
        line(
          styles.dim(
            terminalSafe(`  ▸ ${event.name} ${summarizeArgs(event.name, event.args)}`.trimEnd()),
          ),
        );
        spinner.start(`running ${event.name}…`);
        break;
      case "tool_output": {
        if (!deps.liveOutput) break;
        spinner.stop();
        clearLive();
        endAnswer();
        if (!atLineStart) write("\n");
        const lines = event.text.split("\n");
        for (const text of lines) write(`${styles.dim(terminalSafe(`    │ ${text}`))}\n`);
        liveLines = lines.length;
        spinner.start(`running ${event.name}…`);
        break;
      }
      case "tool_result": {
        spinner.stop();
        clearLive();
        const first = terminalSafe(firstLine(event.text));
        line(event.isError ? styles.red(`    ✗ ${first}`) : styles.dim(`    ✓ ${first}`));
        break;
      }
      case "compaction":
        // A /compact's own: the command's report says what it did, once (describeCompaction).
        if (event.reason === "manual") break;
        spinner.stop();
        line(
          event.method === "summary"
            ? styles.dim(
                `  (context compacted: summarised ${event.removedMessages} older messages, ~${n(event.tokensBefore)} → ~${n(event.tokensAfter)} tokens)`,
              )
            : styles.red(
                `  (the summary request failed: dropped the ${event.removedMessages} oldest messages to fit the context)`,
              ),
        );
        break;
      case "error":
        spinner.stop();
        line(
          styles.red(
            terminalSafeText(
              `error: ${event.kind === "provider" ? explain(event.message) : event.message}`,
            ),
          ),
        );
        break;
      case "notice":
        spinner.stop();
        line(styles.dim(terminalSafeText(event.text)));
        break;
      case "message": {
        spinner.stop();
        const text = terminalSafeText(event.text);
        line(text);
        shown = text.trim();
        break;
      }
      case "run_end":
        spinner.stop();
        clearLive();
        // Posted already by the run's send_message, and shown then: not a second time.
        if (event.delivered) held = "";
        endAnswer();
        shown = undefined;
        if (event.stopReason === "aborted") line(styles.dim("(stopped)"));
        else if (!atLineStart) write("\n");
        break;
      default:
        break;
    }
  };
}

const n = (x: number) => Math.round(x).toLocaleString("en-US");

export function summarizeArgs(tool: string, args: unknown): string {
  if (args === null || typeof args !== "object") return "";
  const a = args as Record<string, unknown>;
  if (tool === "send_message") return messageTarget(a);
  const pick = tool === "bash" ? a.command : (a.path ?? a.query ?? a.url);
  const text = typeof pick === "string" ? pick : JSON.stringify(args);
  return firstLine(text, 100);
}

/**
 * Where a send_message goes: its text to this conversation is shown as the message itself (the
 * `message` event), so the tool line does not say it a second time; elsewhere, the target and
 * the text's first line, as nothing else here shows it.
 */
function messageTarget(a: Record<string, unknown>): string {
  const target = typeof a.channel === "string" ? a.channel : a.to;
  if (typeof target !== "string" || target.trim() === "") return "";
  return firstLine(`→ ${target}: ${typeof a.text === "string" ? a.text : ""}`, 100);
}

function firstLine(text: string, max = 120): string {
  const lines = text.trim().split("\n");
  const head = lines[0] ?? "";
  const more = lines.length > 1 ? ` (+${lines.length - 1} lines)` : "";
  return (head.length > max ? `${head.slice(0, max - 1)}…` : head) + more;
}
