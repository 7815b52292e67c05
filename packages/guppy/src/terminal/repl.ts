import { createInterface } from "node:readline";
import { createAsyncQueue } from "../channels/http/async-queue.js";
import { colorEnabled, createStyles } from "./ansi.js";
import { createChatRenderer } from "./chat-renderer.js";
import {
  BRACKETED_PASTE_OFF,
  BRACKETED_PASTE_ON,
  createPromptAssembler,
  isPlainExit,
} from "./prompt-assembler.js";
import { createSpinner } from "./spinner.js";
import { statusText } from "./status-text.js";
import { terminalSafe } from "./terminal-safe.js";
import type { ThreadClient } from "./thread-client.js";

const slashHelp =
  "/new  start a fresh conversation\n/compact  summarise the older part of the context now\n/status  model, context, tokens, cost\n/exit  quit (so do exit and quit)";

/**
 * The interactive terminal: reads prompts, sends them to the thread, renders its events.
 * A paste is one prompt, however many lines it has (prompt-assembler.ts). Ctrl+C stops a running
 * answer; at the prompt, a second Ctrl+C exits. `stop` (SIGHUP, SIGTERM: the caller aborts the
 * run) ends it after the running answer ends.
 */
// Long by design: one loop whose handlers share readline, the paste assembler and exit state.
export async function runRepl(
  thread: ThreadClient,
  options: {
    explainError?: (message: string) => string;
    stop?: AbortSignal;
    /** The folder the thread's tools work in, named under the banner. */
    workspace?: string;
  } = {},
): Promise<number> {
  const { explainError, stop } = options;
  const out = process.stdout;
  const styles = createStyles(colorEnabled(out));
  const render = createChatRenderer({
    out,
    styles,
    spinner: createSpinner(out, Boolean(out.isTTY), styles),
    liveOutput: Boolean(out.isTTY),
    // Markdown where there are styles to show it with: a terminal, NO_COLOR unset.
    ...(colorEnabled(out)
      ? { markdown: { size: () => ({ columns: out.columns, rows: out.rows }) } }
      : {}),
    ...(explainError ? { explainError } : {}),
  });
  const unsubscribe = thread.subscribe(render);
  const terminal = Boolean(process.stdin.isTTY);
  const rl = createInterface({ input: process.stdin, output: out, terminal });
  const prompt = (continuation = false) => {
    rl.setPrompt(styles.cyan(continuation ? "… " : "› "));
    rl.prompt();
  };

  // What the user sent, one entry per prompt or command; `next()` waits for the next one
  // (undefined once the input has ended and everything sent was read).
  const inputs = createAsyncQueue<string>();
  const reader = inputs[Symbol.asyncIterator]();
  const next = async (): Promise<string | undefined> => (await reader.next()).value ?? undefined;
  let waitingForInput = false;
  const assembler = createPromptAssembler({ emit: (text) => inputs.push(text) });
  rl.on("line", (line) => {
    assembler.line(line);
    // A pasted line held for the rest of the paste: the next one continues it.
    if (terminal && waitingForInput && assembler.holding) prompt(true);
  });
  rl.on("close", () => {
    // Piped input's last lines still run; Ctrl+D in a terminal does not send a paste's beginning.
    assembler.end(!terminal);
    inputs.close();
  });
  // The terminal's paste markers come as keypresses (readline then drops them from the line);
  // this listener runs after readline's, so `rl.line` already holds what was typed.
  const onKeypress = (_text: unknown, key: { name?: string } | undefined) => {
    if (key?.name === "paste-start") assembler.pasteStart();
    else if (key?.name === "paste-end") assembler.pasteEnd(rl.line === "");
  };
  process.stdin.on("keypress", onKeypress);
  // Bracketed paste: the terminal marks a paste, so its line breaks do not send it line by line.
  const ttyOut = terminal && Boolean(out.isTTY);
  let pasteModeOn = false;
  const pasteModeOff = () => {
    if (!pasteModeOn) return;
    pasteModeOn = false;
    out.write(BRACKETED_PASTE_OFF);
  };
  if (ttyOut) {
    out.write(BRACKETED_PASTE_ON);
    pasteModeOn = true;
    process.on("exit", pasteModeOff);
  }

  out.write(styles.dim(`guppy · ${thread.modelRef} · ${thread.threadId} · /help for commands\n`));
  if (options.workspace) out.write(styles.dim(`workspace ${terminalSafe(options.workspace)}\n`));
  let armedExit = false;

  const onInterrupt = () => {
    if (thread.busy()) {
      thread.abort();
      return;
    }
    if (assembler.drop() > 0) {
      // The paste's last line is still in the editor: it goes too (Ctrl+E, then Ctrl+U).
      if (terminal) {
        rl.write(null, { ctrl: true, name: "e" });
        rl.write(null, { ctrl: true, name: "u" });
      }
      out.write(styles.dim("\n(paste dropped)\n"));
      prompt();
      return;
    }
    if (armedExit) {
      rl.close();
      return;
    }
    armedExit = true;
    out.write(styles.dim("\n(press Ctrl+C again to exit)\n"));
    prompt();
  };
  rl.on("SIGINT", onInterrupt);
  process.on("SIGINT", onInterrupt);
  const onStop = () => {
    // A hung-up terminal fails reads too (EIO): not an error worth a stack trace now.
    process.stdin.on("error", () => {});
    rl.close();
  };
  stop?.addEventListener("abort", onStop, { once: true });

  prompt();
  try {
    for (;;) {
      waitingForInput = true;
      const input = await next();
      waitingForInput = false;
      // After a stop, lines the closed input still held are not run.
      if (input === undefined || stop?.aborted) break;
      armedExit = false;
      if (input.trim() === "") {
        prompt();
        continue;
      }
      const lineCount = input.split("\n").length;
      // Typed alone, `exit` and `quit` leave, as in a shell: nobody means them as a prompt.
      if (lineCount === 1 && isPlainExit(input)) break;
      if (lineCount === 1 && input.trim().startsWith("/")) {
        const text = input.trim();
        const command = text.split(/\s+/)[0];
        if (command === "/exit" || command === "/quit") break;
        if (command === "/new" || command === "/compact" || command === "/status") {
          try {
            out.write(`${await runCommand(thread, command, styles)}\n`);
          } catch (error) {
            out.write(styles.red(`${command} failed: ${(error as Error).message}\n`));
          }
          if (stop?.aborted) break;
        } else if (command === "/help") {
          out.write(`${slashHelp}\n`);
        } else {
          out.write(styles.red(`Unknown command ${command}. ${slashHelp.replace(/\n/g, " · ")}\n`));
        }
        prompt();
        continue;
      }
      if (lineCount > 1) {
        // In a terminal the cursor sits after a continuation prompt ("… "): the hint replaces it.
        out.write(
          `${ttyOut ? "\r\x1b[2K" : ""}${styles.dim(`(${lineCount} lines, one prompt)`)}\n`,
        );
      }
      await thread.prompt(input);
      if (stop?.aborted) break;
      prompt();
    }
  } finally {
    process.off("SIGINT", onInterrupt);
    process.stdin.off("keypress", onKeypress);
    stop?.removeEventListener("abort", onStop);
    unsubscribe();
    rl.close();
    pasteModeOff();
    process.off("exit", pasteModeOff);
  }
  out.write("\n");
  return 0;
}

async function runCommand(
  thread: ThreadClient,
  command: "/new" | "/compact" | "/status",
  styles: ReturnType<typeof createStyles>,
): Promise<string> {
  switch (command) {
    case "/new": {
      const archived = await thread.reset();
      return styles.dim(
        archived ? `Started fresh (old context kept at ${archived}).` : "Started fresh.",
      );
    }
    case "/compact":
      return thread.compact();
    case "/status":
      return statusText(await thread.status());
  }
}
