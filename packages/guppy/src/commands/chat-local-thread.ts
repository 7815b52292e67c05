import { relative, sep } from "node:path";
import type { GuppyConfig, Logger, Redactor, ResolvedModel } from "@guppy/core";
import { resolveSandbox } from "@guppy/core/sandbox";
import { canonicalThreadId } from "@guppy/core/thread-layout";
import { UsageError } from "../cli/cli-error.js";
import { createRuntime } from "../gateway/create-runtime.js";
import {
  createListeners,
  type PromptOutcome,
  type ThreadClient,
} from "../terminal/thread-client.js";

export interface LocalThreadOptions {
  threadId: string;
  config: GuppyConfig;
  resolved: ResolvedModel;
  logger: Logger;
  /** The chat's redactor (the store's and logger's): its runner takes secrets out with it too. */
  redactor: Redactor;
  /** `--workspace DIR`: the tools work there instead of the thread's workspace (an absolute path). */
  workspaceDir?: string;
}

/**
 * The chat's thread run by an orchestrator in this process — the gateway's code, for one
 * thread: its prompts go through a durable inbox in the thread's folder (a chat killed mid-run
 * has its prompt run again, or reported, at the next start), the log cursor, status.json,
 * backfill and abort are the orchestrator's. The caller holds the session's chat.lock throughout
 * (lockChatSession), from before `start` until after `close`. `start` kills the tool commands a killed chat of
 * the session left running, then replays what its inbox holds.
 */
export function createLocalThread(
  options: LocalThreadOptions,
): ThreadClient & { start(): Promise<void> } {
  const { threadId, config, resolved, logger, redactor } = options;
  // Once per chat: a sandbox that cannot work here stops it (ConfigError, one line).
  const { sandbox, notice } = resolveSandbox(config);
  if (notice) process.stderr.write(`guppy: ${notice}\n`);
  const { workspaceDir } = options;
  if (workspaceDir && sandbox.type === "docker" && !isWithin(workspaceDir, config.home)) {
    // The container sees the home alone (mounted at /workspace): DIR would not be there.
    throw new UsageError(
      `--workspace ${workspaceDir} is outside ${config.home}, the one folder the docker sandbox's container sees: pick a folder inside it, or set GUPPY_SANDBOX to bwrap or host`,
    );
  }
  // No event bus or heartbeat runs in a chat: the gateway's fire them.
  const runtime = createRuntime(config, {
    scope: { type: "chat", threadId, ...(workspaceDir ? { workspaceDir } : {}) },
    resolved,
    logger,
    redactor,
    sandbox,
    events: false,
    heartbeat: false,
  });
  const { orchestrator } = runtime;
  // Notices reach the terminal as orchestrator events (below); the handle only takes them.
  orchestrator.registerChannel({
    adapterId: "cli",
    threadHandle: (id) => ({ threadId: id, notice: () => {} }),
  });
  const key = canonicalThreadId(threadId);
  const listeners = createListeners();
  /** This client's prompts waiting for their run's end, by inbox id. */
  const waiting = new Map<string, (outcome: PromptOutcome) => void>();
  orchestrator.subscribe((event) => {
    if (canonicalThreadId(event.threadId) !== key) return;
    if (event.type === "notice" && event.text) listeners.emit(event);
    if (event.type === "message") listeners.emit({ type: "message", text: event.text });
    if (event.type !== "runner") return;
    listeners.emit(event.event);
    if (event.event.type !== "run_end") return;
    const { text, stopReason, errorMessage } = event.event;
    waiting.get(event.inboxId)?.({ text, stopReason, ...(errorMessage ? { errorMessage } : {}) });
    waiting.delete(event.inboxId);
  });

  return {
    threadId,
    modelRef: resolved.ref,
    busy: () => waiting.size > 0 || orchestrator.status(threadId).state === "running",
    prompt(text) {
      const result = orchestrator.send(threadId, {
        type: "prompt",
        text,
        userName: process.env.USER ?? "user",
      });
      if (result.status !== "queued") {
        const reason = "reason" in result ? result.reason : `the prompt was ${result.status}`;
        listeners.emit({ type: "error", kind: "internal", message: reason });
        return Promise.resolve({ text: "", stopReason: "error", errorMessage: reason });
      }
      return new Promise((resolve) => waiting.set(result.inboxId, resolve));
    },
    abort() {
      orchestrator.send(threadId, { type: "abort" });
    },
    subscribe: listeners.subscribe,
    async reset() {
      const result = await orchestrator.reset(threadId);
      return result.status === "reset" ? result.archived : undefined;
    },
    async compact() {
      const result = await orchestrator.compact(threadId);
      return result.status === "compacted" ? result.report : "";
    },
    status: async () => orchestrator.status(threadId),
    // Kills the tool commands a killed chat of the session left running, connects the MCP
    // servers, replays the inbox.
    start: () => runtime.start(),
    // Called once the chat's prompts ended: saves the log cursor and status.json.
    close: () => runtime.stop(0),
  };
}

function isWithin(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !rel.startsWith(sep));
}
