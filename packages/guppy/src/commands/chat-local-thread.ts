import { rmSync } from "node:fs";
import { join, relative, sep } from "node:path";
import {
  createConcurrencyLimiter,
  createOrchestrator,
  type GuppyConfig,
  type Logger,
  type Redactor,
  type ResolvedModel,
  type Store,
} from "@guppy/core";
import { EVENTS_DIR, eventsForThread, nextRun, readEventFiles } from "@guppy/core/events";
import {
  describeSandbox,
  RUNNING_TOOLS_FILE,
  recordRunningTrees,
  resolveSandbox,
  takeOverRunningTrees,
} from "@guppy/core/sandbox";
import { canonicalThreadId, SUBAGENTS_DIR } from "@guppy/core/thread-layout";
import { createUsageTotals } from "@guppy/core/usage";
import { UsageError } from "../cli/cli-error.js";
import {
  createListeners,
  type PromptOutcome,
  type ThreadClient,
} from "../terminal/thread-client.js";
import { createThreadRunners } from "./thread-runners.js";

/** `<thread dir>/chat-inbox.jsonl`: the prompts a `guppy chat` accepted, until answered. */
export const CHAT_INBOX_FILE = "chat-inbox.jsonl";

export interface LocalThreadOptions {
  threadId: string;
  config: GuppyConfig;
  resolved: ResolvedModel;
  store: Store;
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
  const { threadId, config, resolved, store, logger, redactor } = options;
  // Once per chat: a sandbox that cannot work here stops it (ConfigError, one line).
  const { sandbox: sandboxConfig, notice } = resolveSandbox(config);
  if (notice) process.stderr.write(`guppy: ${notice}\n`);
  const { workspaceDir } = options;
  if (workspaceDir && sandboxConfig.type === "docker" && !isWithin(workspaceDir, config.home)) {
    // The container sees the home alone (mounted at /workspace): DIR would not be there.
    throw new UsageError(
      `--workspace ${workspaceDir} is outside ${config.home}, the one folder the docker sandbox's container sees: pick a folder inside it, or set GUPPY_SANDBOX to bwrap or host`,
    );
  }
  const dir = store.threadDir(threadId);
  const journal = join(dir, CHAT_INBOX_FILE);
  // One run at a time, the thread's or a subagent's (a waiting parent lends its slot).
  const limiter = createConcurrencyLimiter(1);
  const { subagents, createRunner, mcp } = createThreadRunners({
    config,
    resolved,
    store,
    logger,
    redactor,
    sandboxConfig,
    limiter,
    subagentJournal: join(dir, SUBAGENTS_DIR, "journal.jsonl"),
    ...(workspaceDir ? { workspaceDir } : {}),
  });
  const usage = createUsageTotals({ home: config.home, timeZone: config.timezone });
  const orchestrator = createOrchestrator({
    store,
    maxConcurrent: 1,
    limiter,
    subagents: (id) => subagents.list(id),
    queueDepth: config.queueDepth,
    idleTimeoutMs: config.idleTimeoutSeconds * 1000,
    modelName: resolved.ref,
    contextWindow: resolved.model.contextWindow,
    sandbox: describeSandbox(sandboxConfig),
    logger,
    timezone: config.timezone,
    // /status's totals across /new and today's, from <home>/usage.jsonl.
    threadUsage: usage.threadUsage,
    backfillLimit: config.groupBackfillMessages,
    // The chat holds the session's chat.lock already, and lets go of it after `close`.
    inbox: { file: journal, lock: () => () => {} },
    // No event bus runs in a chat (the gateway's fires them): the thread's event files as they are.
    threadEvents: (id) => {
      const now = Date.now();
      return eventsForThread(readEventFiles(join(config.home, EVENTS_DIR)).events, id).map((e) => {
        const at = nextRun(e, now, config.timezone);
        return {
          id: e.id,
          type: e.type,
          ...(e.schedule ? { schedule: e.schedule } : {}),
          ...(at !== undefined ? { nextRun: new Date(at).toISOString() } : {}),
        };
      });
    },
    createRunner,
  });
  subagents.attach(orchestrator);
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
  const toolsFile = join(dir, RUNNING_TOOLS_FILE);

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
    async start() {
      // The chat holds the session's lock: a command listed there was left by one that was killed.
      takeOverRunningTrees(toolsFile, logger, "a guppy chat");
      // A one-shot prompt sees the MCP servers' tools: they get GUPPY_MCP_START_SECONDS to connect.
      mcp?.start();
      await mcp?.ready(config.mcpStartSeconds * 1000);
      await orchestrator.start();
      subagents.recover();
    },
    async close() {
      // Called once the chat's prompts ended: saves the log cursor and status.json.
      subagents.stop();
      await orchestrator.shutdown(0);
      await mcp?.close();
      recordRunningTrees(undefined);
      // Every prompt answered, the cursor past their lines: nothing is left to replay, and the
      // answered prompts' ids, which a gateway keeps until the thread idles, would pile up.
      if (orchestrator.status(threadId).queued === 0) rmSync(journal, { force: true });
    },
  };
}

function isWithin(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !rel.startsWith(sep));
}
