import {
  type AgentRunner,
  createLineLogger,
  createStore,
  createThreadRunner,
  type ResolvedModel,
  resolveModel,
} from "@guppy/core";
import { ExitCode, UsageError } from "../cli/cli-error.js";
import { rejectExtraArguments } from "../cli/extra-arguments.js";
import type { CliArgs } from "../cli/parse-cli-args.js";
import { sessionThreadId } from "../cli/session-thread-id.js";
import { createStyles } from "../terminal/ansi.js";
import { createChatRenderer } from "../terminal/chat-renderer.js";
import { createModelErrorExplainer } from "../terminal/model-connection-error.js";
import { createSpinner } from "../terminal/spinner.js";
import { terminalSafeText } from "../terminal/terminal-safe.js";
import { lockChatSession } from "./chat-session-lock.js";
import { type ChatStop, watchStopSignals } from "./chat-stop-signals.js";
import { type ChatThreadFiles, createChatThreadFiles } from "./chat-thread-files.js";
import { loadCliConfig } from "./load-cli-config.js";

/** `guppy chat`: the interactive terminal, or with -m one prompt whose answer alone goes to stdout. */
export async function chatCommand(args: CliArgs): Promise<number> {
  // The arguments first: a mistake in them is reported before the model is looked for (which
  // may ask local servers) or anything is created.
  rejectExtraArguments(args, "guppy chat", 0, 'to send one prompt use -m "TEXT"');
  if (args.message?.trim() === "") throw new UsageError("-m needs a non-empty message.");
  const threadId = sessionThreadId(args.session);
  const config = loadCliConfig(args);
  const logger = createLineLogger({ level: config.debug ? "debug" : "warn" });
  const store = createStore({ home: config.home, logger });
  // Before the model is looked for: a second chat on the session is told at once.
  const unlock = lockChatSession(store, threadId, args.session ?? "default");
  let runner: AgentRunner;
  let resolved: ResolvedModel;
  try {
    resolved = await resolveModel(config);
    runner = createThreadRunner({ threadId, config, resolved, store, logger });
  } catch (error) {
    unlock();
    throw error;
  }
  const errors = createModelErrorExplainer(resolved.model.baseUrl);
  const files = createChatThreadFiles(store, runner, logger);
  const stop = watchStopSignals(runner, () => {
    files.close();
    unlock();
  });
  try {
    let code: number;
    if (args.message !== undefined) {
      code = await runOnce(runner, files, args.message, config.debug, errors.explain, stop);
    } else {
      const { runRepl } = await import("../terminal/repl.js");
      code = await runRepl(runner, resolved.ref, {
        send: files.prompt,
        explainError: errors.explain,
        stop: stop.signal,
      });
    }
    return stop.exitCode() ?? code;
  } finally {
    errors.close();
    files.close();
    unlock();
    stop.end();
  }
}

async function runOnce(
  runner: AgentRunner,
  files: ChatThreadFiles,
  text: string,
  debug: boolean,
  explainError: (message: string) => string,
  stop: ChatStop,
): Promise<number> {
  if (debug) {
    // Tool calls and errors to stderr; stdout keeps the answer alone.
    const render = createChatRenderer({
      out: process.stderr,
      styles: createStyles(false),
      spinner: createSpinner(process.stderr, false),
      explainError,
    });
    runner.subscribe((e) => {
      if (e.type !== "text_delta" && e.type !== "run_end") render(e);
    });
  }
  // SIGHUP and SIGTERM: see chat-stop-signals.ts.
  const onSigint = () => runner.abort();
  process.on("SIGINT", onSigint);
  // The answer as it is for a pipe or a file; to a terminal, as text (no control sequences).
  const answer = (text: string) =>
    process.stdout.write(`${process.stdout.isTTY ? terminalSafeText(text) : text}\n`);
  try {
    const result = await files.prompt(text);
    switch (result.stopReason) {
      case "error":
        process.stderr.write(
          `guppy: ${explainError(result.errorMessage ?? "the model request failed")}\n`,
        );
        return ExitCode.failed;
      case "aborted":
        if (result.text) answer(result.text);
        process.stderr.write(
          stop.stoppedBy() ? `guppy: stopped by ${stop.stoppedBy()}\n` : "guppy: interrupted\n",
        );
        return stop.exitCode() ?? ExitCode.interrupted;
      case "max_tool_rounds":
        process.stderr.write(`guppy: ${result.text}\n`);
        return ExitCode.failed;
      default:
        answer(result.text);
        return ExitCode.ok;
    }
  } finally {
    process.off("SIGINT", onSigint);
  }
}
