import type { Styles } from "./ansi.js";
import type { Spinner } from "./spinner.js";
import { terminalSafe, terminalSafeText } from "./terminal-safe.js";
import type { ThreadClientEvent } from "./thread-client.js";

/**
 * Shows a thread's events in the terminal: streamed text, a spinner while waiting, dim tool
 * lines, guppy's notices.
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
}): (event: ThreadClientEvent) => void {
  const { out, styles, spinner } = deps;
  const explain = deps.explainError ?? ((message: string) => message);
  let atLineStart = true;
  const write = (text: string) => {
    if (text === "") return;
    out.write(text);
    atLineStart = text.endsWith("\n");
  };
  const line = (text: string) => {
    if (!atLineStart) write("\n");
    write(`${text}\n`);
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
      case "thinking_start":
        spinner.start("thinking…");
        break;
      case "thinking_end":
        spinner.stop();
        break;
      case "text_delta":
        spinner.stop();
        // What the model or a tool wrote reaches the terminal as text, never as control
        // sequences (a file a tool read could clear the screen or set the window's title).
        write(terminalSafeText(event.delta));
        break;
      case "tool_call":
        spinner.stop();
        line(
          styles.dim(terminalSafe(`  ▸ ${event.name} ${summarizeArgs(event.name, event.args)}`)),
        );
        spinner.start(`running ${event.name}…`);
        break;
      case "tool_output": {
        if (!deps.liveOutput) break;
        spinner.stop();
        clearLive();
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
        spinner.stop();
        line(
          event.method === "summary"
            ? styles.dim(
                `  (context compacted: ${event.removedMessages} older messages summarised, ~${event.tokensBefore} → ~${event.tokensAfter} tokens)`,
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
      case "message":
        spinner.stop();
        line(terminalSafeText(event.text));
        break;
      case "run_end":
        spinner.stop();
        clearLive();
        if (event.stopReason === "aborted") line(styles.dim("(stopped)"));
        else if (!atLineStart) write("\n");
        break;
      default:
        break;
    }
  };
}

export function summarizeArgs(tool: string, args: unknown): string {
  if (args === null || typeof args !== "object") return "";
  const a = args as Record<string, unknown>;
  const pick = tool === "bash" ? a.command : (a.path ?? a.query ?? a.url);
  const text = typeof pick === "string" ? pick : JSON.stringify(args);
  return firstLine(text, 100);
}

function firstLine(text: string, max = 120): string {
  const lines = text.trim().split("\n");
  const head = lines[0] ?? "";
  const more = lines.length > 1 ? ` (+${lines.length - 1} lines)` : "";
  return (head.length > max ? `${head.slice(0, max - 1)}…` : head) + more;
}
