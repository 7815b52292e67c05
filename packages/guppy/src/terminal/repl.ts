import { createInterface } from "node:readline";
import type { AgentRunner } from "@guppy/core";
import { colorEnabled, createStyles } from "./ansi.js";
import { createChatRenderer } from "./chat-renderer.js";
import { createSpinner } from "./spinner.js";
import { compactText, statusText } from "./status-text.js";

const slashHelp =
  "/new  start a fresh conversation\n/compact  summarise the older part of the context now\n/status  model, context, tokens, cost\n/exit  quit";

/**
 * The interactive terminal: reads lines, runs them through the runner, renders its events.
 * Ctrl+C stops a running answer; at the prompt, a second Ctrl+C exits.
 */
export async function runRepl(
  runner: AgentRunner,
  modelRef: string,
  explainError?: (message: string) => string,
): Promise<number> {
  const out = process.stdout;
  const styles = createStyles(colorEnabled(out));
  const render = createChatRenderer({
    out,
    styles,
    spinner: createSpinner(out, Boolean(out.isTTY), styles),
    ...(explainError ? { explainError } : {}),
  });
  const unsubscribe = runner.subscribe(render);
  const rl = createInterface({
    input: process.stdin,
    output: out,
    terminal: Boolean(process.stdin.isTTY),
  });
  const prompt = () => {
    rl.setPrompt(styles.cyan("› "));
    rl.prompt();
  };

  out.write(styles.dim(`guppy · ${modelRef} · ${runner.threadId} · /help for commands\n`));
  let armedExit = false;
  let closed = false;

  const onInterrupt = () => {
    if (runner.running) {
      runner.abort();
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

  const lines = rl[Symbol.asyncIterator]();
  prompt();
  try {
    while (!closed) {
      const next = await lines.next();
      if (next.done) break;
      armedExit = false;
      const text = next.value.trim();
      if (text === "") {
        prompt();
        continue;
      }
      if (text.startsWith("/")) {
        const command = text.split(/\s+/)[0];
        if (command === "/exit" || command === "/quit") break;
        if (command === "/new") {
          const archived = runner.reset();
          out.write(
            styles.dim(
              archived ? `Started fresh (old context kept at ${archived}).\n` : "Started fresh.\n",
            ),
          );
        } else if (command === "/compact") {
          out.write(`${await compactText(runner)}\n`);
        } else if (command === "/status") {
          out.write(`${statusText(runner, modelRef)}\n`);
        } else if (command === "/help") {
          out.write(`${slashHelp}\n`);
        } else {
          out.write(styles.red(`Unknown command ${command}. ${slashHelp.replace(/\n/g, " · ")}\n`));
        }
        prompt();
        continue;
      }
      await runner.prompt({ text, userName: process.env.USER ?? "user" });
      prompt();
    }
  } finally {
    closed = true;
    process.off("SIGINT", onInterrupt);
    unsubscribe();
    rl.close();
  }
  out.write("\n");
  return 0;
}
