import { mkdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import {
  createLineLogger,
  redactLogger,
  resolveModel,
  routeConsoleTo,
  type Store,
} from "@guppy/core";
import { threadDirOf, WORKSPACE_DIR } from "@guppy/core/thread-layout";
import { API_TOKEN_FILE, existingApiToken } from "../channels/http/api-token.js";
import { type GatewayAddress, readGatewayFile } from "../channels/http/gateway-file.js";
import type { AppConfig } from "../channels/registry.js";
import { ExitCode, UsageError } from "../cli/cli-error.js";
import { rejectExtraArguments } from "../cli/extra-arguments.js";
import type { CliArgs } from "../cli/parse-cli-args.js";
import { sessionThreadId } from "../cli/session-thread-id.js";
import { colorEnabled, createStyles } from "../terminal/ansi.js";
import { createChatRenderer } from "../terminal/chat-renderer.js";
import { renderMarkdown } from "../terminal/markdown-ansi.js";
import { createModelErrorExplainer } from "../terminal/model-connection-error.js";
import { createSpinner } from "../terminal/spinner.js";
import { terminalSafeText } from "../terminal/terminal-safe.js";
import type { ThreadClient } from "../terminal/thread-client.js";
import { createLocalThread } from "./chat-local-thread.js";
import { chatSessionHolder, lockChatSession, sessionOpenError } from "./chat-session-lock.js";
import { type ChatStop, watchStopSignals } from "./chat-stop-signals.js";
import { withLiveKey } from "./live-key.js";
import { createCliRedactor, loadCliConfig } from "./load-cli-config.js";
import { chatModelOrSetup } from "./setup-offer.js";

/**
 * `guppy chat`: the interactive terminal, or with -m one prompt whose answer alone goes to stdout.
 * With a `guppy serve` running on the home, the chat attaches to it (its thread runs there);
 * otherwise it runs the thread through an orchestrator of its own, holding the session's lock.
 */
export async function chatCommand(args: CliArgs): Promise<number> {
  // The arguments first: a mistake in them is reported before the model is looked for (which
  // may ask local servers) or anything is created.
  rejectExtraArguments(args, "guppy chat", 0, 'to send one prompt use -m "TEXT"');
  if (args.message?.trim() === "") throw new UsageError("-m needs a non-empty message.");
  const threadId = sessionThreadId(args.session);
  const session = args.session ?? "default";
  const workspace = workspaceFlag(args);
  const config = loadCliConfig(args);
  // Where the session's thread is (its lock, the gateway's event stream): nothing with a secret
  // in it is written before the model is known, so the store (and its redactor) comes then.
  const dirs: ThreadDirs = { threadDir: (id) => threadDirOf(config.home, id) };
  const gateway = readGatewayFile(config.home);
  const attached = gateway && (await attach(gateway, config, dirs, threadId, session));
  if (attached && workspace !== undefined) {
    // The gateway's runner of this thread is its own, shared with the thread's other clients;
    // a folder sent over its API would be a new power for whoever holds the API token.
    await attached.thread.close();
    throw new UsageError(
      `--workspace needs the chat to run its thread itself, but guppy serve (pid ${gateway.pid}) runs the threads of ${config.home}: stop it, or chat without --workspace`,
    );
  }
  const opened = attached || (await runHere(config, dirs, threadId, session, args, workspace));
  const { thread, explain } = opened;
  const stop = watchStopSignals(
    () => thread.abort(),
    () => opened.unlock?.(),
  );
  try {
    let code: number;
    if (args.message !== undefined) {
      code = await runOnce(thread, args.message, config.debug, explain, stop);
    } else {
      const { runRepl } = await import("../terminal/repl.js");
      code = await runRepl(thread, {
        explainError: explain,
        stop: stop.signal,
        workspace: workspace ?? join(dirs.threadDir(threadId), WORKSPACE_DIR),
      });
    }
    return stop.exitCode() ?? code;
  } finally {
    try {
      await thread.close();
    } finally {
      opened.close?.();
      opened.unlock?.();
      stop.end();
    }
  }
}

/** The paths a chat needs before it knows where its thread runs. */
type ThreadDirs = Pick<Store, "threadDir">;

interface OpenedThread {
  thread: ThreadClient;
  explain: (message: string) => string;
  unlock?: () => void;
  close?: () => void;
}

/**
 * The thread through the gateway's HTTP API (chat-gateway-thread.ts); undefined when nothing
 * listens at its address (its pid now another process's): the chat runs the thread itself.
 */
async function attach(
  gateway: GatewayAddress,
  config: AppConfig,
  store: ThreadDirs,
  threadId: string,
  session: string,
): Promise<OpenedThread | undefined> {
  // A chat that had the session open before the gateway started runs it still (the gateway
  // refuses the thread meanwhile): one chat per session, as without a gateway.
  const holder = chatSessionHolder(store, threadId);
  if (holder !== undefined) throw sessionOpenError(session, holder);
  const token = existingApiToken(config);
  if (!token) {
    throw new UsageError(
      `guppy serve (pid ${gateway.pid}) runs on ${config.home} but its API token is not in ${join(config.home, API_TOKEN_FILE)}: set GUPPY_API_TOKEN as it has it`,
    );
  }
  // The gateway knows a thread with a directory: its event stream opens before the first prompt.
  mkdirSync(store.threadDir(threadId), { recursive: true });
  const { attachToGateway } = await import("./chat-gateway-thread.js");
  try {
    const thread = await attachToGateway({ gateway, token, threadId });
    return { thread, explain: (message) => message };
  } catch (error) {
    if ((error as { cause?: { code?: string } }).cause?.code === "ECONNREFUSED") return undefined;
    throw error;
  }
}

/**
 * The thread through an orchestrator in this process (chat-local-thread.ts, on the composition
 * root gateway/create-runtime.ts). Its one redactor, made once the model is resolved (a custom
 * endpoint's key is known only then), is shared by its logger, store and runner, as in `guppy serve`.
 */
async function runHere(
  config: AppConfig,
  dirs: ThreadDirs,
  threadId: string,
  session: string,
  args: CliArgs,
  workspaceDir: string | undefined,
): Promise<OpenedThread> {
  // Before the model is looked for: a second chat on the session is told at once.
  const unlock = lockChatSession(dirs, threadId, session);
  try {
    // No model configured: a local server, else (on a terminal) `guppy setup` offered.
    const ready = await chatModelOrSetup(args, config, args.message === undefined);
    config = ready.config;
    const resolved = withLiveKey(
      await resolveModel(config, ready.discover ? { discover: ready.discover } : {}),
      config,
    );
    const redactor = createCliRedactor(config, resolved, existingApiToken(config));
    const logger = redactLogger(
      createLineLogger({ level: config.debug ? "debug" : "warn" }),
      redactor,
    );
    // A provider's malformed chunk, printed raw by its SDK: the run's error says what failed.
    routeConsoleTo(logger, "debug");
    const thread = createLocalThread({
      threadId,
      config,
      resolved,
      logger,
      redactor,
      ...(workspaceDir ? { workspaceDir } : {}),
    });
    const errors = createModelErrorExplainer(resolved.model.baseUrl);
    await thread.start();
    return { thread, explain: errors.explain, unlock, close: errors.close };
  } catch (error) {
    unlock();
    throw error;
  }
}

/** An answer for a terminal: no control sequences; Markdown rendered when colour is on. */
function forTerminal(text: string): string {
  const safe = terminalSafeText(text);
  return colorEnabled(process.stdout) ? renderMarkdown(safe, createStyles(true)) : safe;
}

/** `--workspace DIR` as an absolute path, once it is known to be a directory. */
function workspaceFlag(args: CliArgs): string | undefined {
  const given = args.flags.workspace;
  if (given === undefined) return undefined;
  if (typeof given !== "string" || given.trim() === "") {
    throw new UsageError("--workspace needs a directory: guppy chat --workspace DIR");
  }
  const dir = resolve(given);
  let isDir: boolean;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    throw new UsageError(`--workspace ${given}: there is no such directory (${dir})`);
  }
  if (!isDir) throw new UsageError(`--workspace ${given}: ${dir} is not a directory`);
  return dir;
}

async function runOnce(
  thread: ThreadClient,
  text: string,
  debug: boolean,
  explainError: (message: string) => string,
  stop: ChatStop,
): Promise<number> {
  // Tool calls and errors to stderr when debugging; guppy's notices always: stdout keeps the
  // answer alone.
  const render = debug
    ? createChatRenderer({
        out: process.stderr,
        styles: createStyles(false),
        spinner: createSpinner(process.stderr, false),
        explainError,
      })
    : undefined;
  const unsubscribe = thread.subscribe((e) => {
    if (render && e.type !== "text_delta" && e.type !== "run_end") render(e);
    else if (e.type === "notice") process.stderr.write(`guppy: ${terminalSafeText(e.text)}\n`);
  });
  // SIGHUP and SIGTERM: see chat-stop-signals.ts.
  const onSigint = () => thread.abort();
  process.on("SIGINT", onSigint);
  // The answer as it is for a pipe or a file (byte for byte); to a terminal, as text (no control
  // sequences) with its Markdown rendered where colour is on.
  const answer = (text: string) =>
    process.stdout.write(`${process.stdout.isTTY ? forTerminal(text) : text}\n`);
  try {
    const result = await thread.prompt(text);
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
    unsubscribe();
  }
}
