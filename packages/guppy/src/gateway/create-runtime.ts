import { rmSync } from "node:fs";
import { join } from "node:path";
import {
  createConcurrencyLimiter,
  createEventBus,
  createHeartbeat,
  createLastChannel,
  createOrchestrator,
  createStore,
  type EventBus,
  type EventBusReport,
  type GuppyConfig,
  type Heartbeat,
  type LastChannel,
  type Logger,
  type McpManager,
  parseActiveHours,
  type Redactor,
  type ResolvedModel,
  type RuntimeOrchestrator,
  type Store,
  type Subagents,
  silentLogger,
} from "@guppy/core";
import {
  EVENTS_DIR,
  type EventClock,
  eventsForThread,
  nextRun,
  readEventFiles,
} from "@guppy/core/events";
import {
  describeSandbox,
  RUNNING_TOOLS_FILE,
  recordRunningTrees,
  resolveSandbox,
  type SandboxConfig,
  takeOverRunningTrees,
} from "@guppy/core/sandbox";
import { SUBAGENTS_DIR } from "@guppy/core/thread-layout";
import { createUsageTotals, type UsageTotalsReader } from "@guppy/core/usage";
import { heartbeatAdapters } from "../channels/registry.js";
import { heldByChat } from "../commands/chat-session-lock.js";
import { createThreadRunners } from "./thread-runners.js";

/**
 * Whose runtime this is. `gateway` (`guppy serve`, the channel tests): every thread of the home,
 * GUPPY_MAX_CONCURRENT run slots, the home's inbox and its lock, subagents journalled in
 * `<home>/subagents.jsonl`, a thread a `guppy chat` holds refused, runners given their
 * channel's handle, MCP servers connected in the background once started. `chat` (the in-process
 * `guppy chat`): one thread and one run slot, its own inbox in the thread's folder (the caller
 * holds the session's chat.lock), subagents journalled there, the tools working in
 * `workspaceDir` when given, MCP servers given GUPPY_MCP_START_SECONDS to connect before the
 * first prompt; at stop its subagents stop before its thread (the gateway's after the drain) and
 * the inbox is removed once every prompt was answered.
 */
export type RuntimeScope =
  | { type: "gateway" }
  | {
      type: "chat";
      threadId: string;
      /** `--workspace DIR`: the tools work there instead of the thread's workspace (absolute). */
      workspaceDir?: string;
    };

export interface RuntimeOptions {
  scope: RuntimeScope;
  /** The model, resolved by the caller (`guppy serve` and `guppy chat` ask the key again at each request). */
  resolved: ResolvedModel;
  /** Default: silent. */
  logger?: Logger;
  /** The secrets taken out of what the store, the logger and the runners write. */
  redactor?: Redactor;
  /** The sandbox, already resolved by the caller; default `resolveSandbox(config)`, its notice logged as a warning. */
  sandbox?: SandboxConfig;
  /** Whether the event bus fires `<home>/events/` (started by `start`); without it a thread's events are read from the files. */
  events: boolean;
  /** Whether the heartbeat beats (GUPPY_HEARTBEAT_SECONDS, started by `start`). */
  heartbeat: boolean;
  /** What the event bus did (`guppy serve`'s readable log). */
  onEventsReport?: (report: EventBusReport) => void;
  /** Time and timers of the event bus and the heartbeat (tests); default the real ones. */
  clock?: EventClock;
}

export interface Runtime<C extends GuppyConfig = GuppyConfig> {
  config: C;
  resolved: ResolvedModel;
  logger: Logger;
  sandbox: SandboxConfig;
  store: Store;
  orchestrator: RuntimeOrchestrator;
  subagents: Subagents;
  /** The MCP servers' connections; undefined when none is configured. */
  mcp: McpManager | undefined;
  /** The event bus; undefined unless `events`. */
  events: EventBus | undefined;
  usage: UsageTotalsReader;
  /** The owner's latest chat thread, where heartbeats run (channels record it as they send). */
  lastChannel: LastChannel;
  /**
   * Takes over the tool commands a killed process left, replays the inbox, then starts the
   * heartbeat, the subagents' recovery, the event bus and (gateway) the MCP servers. Channels
   * register with the orchestrator before, so that replayed answers find them.
   */
  start(): Promise<void>;
  /**
   * The heartbeat and the event bus stop and the orchestrator refuses new prompts at once (before
   * the first await); resolves once the running turns ended within `graceMs` (then aborted), the
   * subagents stopped and the MCP servers closed.
   */
  stop(graceMs: number): Promise<void>;
}

/** `<thread dir>/chat-inbox.jsonl`: the prompts a `guppy chat` accepted, until answered. */
const CHAT_INBOX_FILE = "chat-inbox.jsonl";

/** `<home>/subagents.jsonl`: subagents whose results their parents have not got yet. */
const SUBAGENTS_JOURNAL = "subagents.jsonl";

/**
 * The composition root: the one place guppy's runtime is assembled, in dependency order — store,
 * sandbox, thread runners (tools, MCP, subagents), event bus, orchestrator, heartbeat. `guppy
 * serve`, the in-process `guppy chat` and the tests use it; what differs between them is in
 * `options`. Nothing runs until `start`.
 */
export function createRuntime<C extends GuppyConfig>(
  config: C,
  options: RuntimeOptions,
): Runtime<C> {
  const { scope, resolved } = options;
  const logger = options.logger ?? silentLogger;
  const { redactor } = options;
  const store = createStore({ home: config.home, logger, redactor });
  const sandbox = options.sandbox ?? resolveSandboxLogged(config, logger);
  const chatDir = scope.type === "chat" ? store.threadDir(scope.threadId) : undefined;
  const maxConcurrent = scope.type === "chat" ? 1 : config.maxConcurrent;
  // One set of run slots for the threads and their subagents (a waiting parent lends its slot).
  const limiter = createConcurrencyLimiter(maxConcurrent);
  const { subagents, createRunner, mcp } = createThreadRunners({
    config,
    resolved,
    store,
    logger,
    redactor,
    sandboxConfig: sandbox,
    limiter,
    subagentJournal: chatDir
      ? join(chatDir, SUBAGENTS_DIR, "journal.jsonl")
      : join(config.home, SUBAGENTS_JOURNAL),
    ...(scope.type === "gateway"
      ? { threadHandle: (threadId: string) => orchestrator.threadHandle(threadId) }
      : {}),
    ...(scope.type === "chat" && scope.workspaceDir ? { workspaceDir: scope.workspaceDir } : {}),
  });
  const clock = options.clock;
  // Event files (<home>/events/) fire prompts through the orchestrator; started by `start`.
  const events = options.events
    ? createEventBus({
        home: config.home,
        orchestrator: {
          send: (threadId, message) => orchestrator.send(threadId, message),
          sendToChannel: (...a) => orchestrator.sendToChannel(...a),
        },
        timezone: config.timezone,
        logger,
        ...(options.onEventsReport ? { report: options.onEventsReport } : {}),
        ...(clock ? { clock } : {}),
      })
    : undefined;
  const usage = createUsageTotals({ home: config.home, timeZone: config.timezone });
  const chatInbox = chatDir ? join(chatDir, CHAT_INBOX_FILE) : undefined;
  const orchestrator = createOrchestrator({
    store,
    limiter,
    subagents: (threadId) => subagents.list(threadId),
    maxConcurrent,
    queueDepth: config.queueDepth,
    idleTimeoutMs: config.idleTimeoutSeconds * 1000,
    backfillLimit: config.groupBackfillMessages,
    modelName: resolved.ref,
    contextWindow: resolved.model.contextWindow,
    sandbox: describeSandbox(sandbox),
    logger,
    timezone: config.timezone,
    // /status's totals across /new and today's, from <home>/usage.jsonl.
    threadUsage: usage.threadUsage,
    // The chat holds the session's chat.lock already, and lets go of it after `stop`.
    ...(chatInbox ? { inbox: { file: chatInbox, lock: () => () => {} } } : {}),
    // A `guppy chat` that had its session open before this start runs that thread (409 here).
    ...(scope.type === "gateway"
      ? { heldElsewhere: (threadId: string) => heldByChat(store, threadId) }
      : {}),
    threadEvents: (threadId) =>
      events
        ? events.eventsOf(threadId).map(({ id, type, schedule, nextRun }) => ({
            id,
            type,
            ...(schedule ? { schedule } : {}),
            ...(nextRun ? { nextRun } : {}),
          }))
        : eventsInFiles(config, threadId, clock),
    createRunner,
  });
  subagents.attach(orchestrator);
  const lastChannel = createLastChannel(config.home, logger, heartbeatAdapters);
  const heartbeat: Heartbeat | undefined = options.heartbeat
    ? createHeartbeat({
        home: config.home,
        intervalSeconds: config.heartbeatSeconds,
        hours: config.heartbeatHours ? parseActiveHours(config.heartbeatHours) : undefined,
        timeZone: config.timezone,
        orchestrator,
        subscribe: orchestrator.subscribe,
        lastChannel,
        logger,
        ...(clock ? { now: () => new Date(clock.now()) } : {}),
      })
    : undefined;
  // The running tool commands are listed here; one left by a killed process is ours to end.
  const toolsFile = join(chatDir ?? config.home, RUNNING_TOOLS_FILE);

  return {
    config,
    resolved,
    logger,
    sandbox,
    store,
    orchestrator,
    subagents,
    mcp,
    events,
    usage,
    lastChannel,
    async start() {
      // The caller holds the inbox lock (the gateway's) or the session's chat.lock: no other
      // process of ours records here, so a command listed was left by one that was killed.
      takeOverRunningTrees(toolsFile, logger, scope.type === "chat" ? "a guppy chat" : "a guppy");
      if (scope.type === "chat") {
        // A one-shot prompt sees the MCP servers' tools: they get GUPPY_MCP_START_SECONDS to connect.
        mcp?.start();
        await mcp?.ready(config.mcpStartSeconds * 1000);
      }
      await orchestrator.start();
      heartbeat?.start();
      // Results a killed process did not hand over go to their parents now, once.
      subagents.recover();
      // The files are read a few hundred per turn of the event loop: the gateway answers meanwhile.
      void events?.start();
      // The gateway's MCP servers connect in the background once it answers (loading the SDK and
      // starting their processes would delay that); their tools are added to runs as they come.
      if (scope.type === "gateway") mcp?.start();
    },
    async stop(graceMs) {
      heartbeat?.stop();
      // No event fires into a draining orchestrator (it would refuse it and the slot be lost).
      events?.stop();
      // A chat stops once its prompts ended: its subagents first. The gateway's still running once
      // the threads' runs drained stop then. Their results (or that they were interrupted) are
      // handed over at the next start.
      if (scope.type === "chat") subagents.stop();
      await orchestrator.shutdown(graceMs);
      if (scope.type === "gateway") subagents.stop();
      await mcp?.close();
      if (scope.type !== "chat" || !chatInbox) return;
      // A chat stops recording its tool commands here (the gateway's process exits after its stop).
      recordRunningTrees(undefined);
      // Every prompt answered, the cursor past their lines: nothing is left to replay, and the
      // answered prompts' ids, which a gateway keeps until the thread idles, would pile up.
      if (orchestrator.status(scope.threadId).queued === 0) rmSync(chatInbox, { force: true });
    },
  };
}

function resolveSandboxLogged(config: GuppyConfig, logger: Logger): SandboxConfig {
  // A sandbox that cannot work here stops the start (ConfigError).
  const { sandbox, notice } = resolveSandbox(config);
  if (notice) logger.warn(notice);
  return sandbox;
}

/** A thread's events as their files say, where no event bus runs (a chat: the gateway fires them). */
function eventsInFiles(config: GuppyConfig, threadId: string, clock: EventClock | undefined) {
  const now = clock ? clock.now() : Date.now();
  return eventsForThread(readEventFiles(join(config.home, EVENTS_DIR)).events, threadId).map(
    (e) => {
      const at = nextRun(e, now, config.timezone);
      return {
        id: e.id,
        type: e.type,
        ...(e.schedule ? { schedule: e.schedule } : {}),
        ...(at !== undefined ? { nextRun: new Date(at).toISOString() } : {}),
      };
    },
  );
}
