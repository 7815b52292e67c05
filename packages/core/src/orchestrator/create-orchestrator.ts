import { existsSync } from "node:fs";
import { createInbox, type InboxLocation } from "../inbox/create-inbox.js";
import { type Logger, silentLogger } from "../logging/logger.js";
import { oneLine } from "../runner/message-text.js";
import type { AgentRunner } from "../runner/types.js";
import type { Store } from "../store/create-store.js";
import { canonicalThreadId, parseThreadId } from "../store/thread-layout.js";
import type {
  ActorMessage,
  ChannelLink,
  CompactResult,
  ResetResult,
  SendResult,
  SubagentInfo,
  ThreadEventInfo,
  ThreadHandle,
  ThreadUsage,
} from "../types.js";
import type { ActorHost } from "./actor-types.js";
import { type ConcurrencyLimiter, createConcurrencyLimiter } from "./concurrency-limiter.js";
import { postMessage } from "./post-message.js";
import { clearUnusedLater, replayInbox } from "./replay.js";
import { shutdownActors } from "./shutdown.js";
import { ThreadActor } from "./thread-actor.js";
import { SavedStatuses, threadStatus } from "./thread-status.js";
import type { OrchestratorEvent, OrchestratorListener, RuntimeOrchestrator } from "./types.js";

export interface OrchestratorOptions {
  store: Store;
  /** Activation: builds the thread's runner (it loads the saved context). */
  createRunner(threadId: string): AgentRunner;
  /** GUPPY_MAX_CONCURRENT: runs at once across all threads. */
  maxConcurrent: number;
  /**
   * GUPPY_QUEUE_DEPTH: how many prompts of a thread may wait (accepted, not running yet); one
   * more is answered "busy".
   */
  queueDepth: number;
  /** GUPPY_IDLE_TIMEOUT_SECONDS × 1000: an idle thread's runner is dropped after this. */
  idleTimeoutMs: number;
  /**
   * GUPPY_GROUP_BACKFILL_MESSAGES: at most this many logged messages are backfilled before a run,
   * the newest (default 50).
   */
  backfillLimit?: number;
  /** Shown by `status()` for threads whose runner is not loaded. */
  modelName?: string;
  contextWindow?: number;
  /** Where the tools run, as `describeSandbox` says it: every thread's `status()` carries it. */
  sandbox?: string;
  logger?: Logger;
  /** The durable inbox's journal and lock, if not the home's (`guppy chat`: its session's). */
  inbox?: InboxLocation;
  /**
   * Why another process runs the thread now (a `guppy chat` holds its session), or undefined:
   * `send`, `reset` and `compact` of such a thread refuse with that reason, and its prompts left
   * in the inbox wait for a later start.
   */
  heldElsewhere?(threadId: string): string | undefined;
  /**
   * The run slots (GUPPY_MAX_CONCURRENT), when the app shares them with runs of its own
   * (subagents): default, a limiter of `maxConcurrent` made here.
   */
  limiter?: ConcurrencyLimiter;
  /** A thread's subagents for its status (the app's subagent service). */
  subagents?(threadId: string): SubagentInfo[] | undefined;
  /** A thread's scheduled events (the event bus's): every `status()` carries them. */
  threadEvents?(threadId: string): ThreadEventInfo[];
  /** A thread's totals from the usage ledger (`createUsageTotals`): every `status()` carries them. */
  threadUsage?(threadId: string): ThreadUsage;
  /**
   * GUPPY_TIMEZONE (else the system's): a message backfilled into a context carries the local
   * time it was logged at, as a live prompt carries its own.
   */
  timezone?: string;
}

/** Why `reset` or `compact` refused: another process runs the thread (`heldElsewhere`). */
export class ThreadHeldError extends Error {
  override name = "ThreadHeldError";
}

/**
 * The single front door: one actor per thread (`ThreadActor`), activated on demand and evicted
 * after an idle timeout; prompts go through the durable inbox and a global FIFO concurrency
 * limit; steer and abort bypass the queue. This keeps the registry of actors, the routing of
 * messages to them, the channel links and the subscribers.
 */
// Long by design: the returned object's methods share the registry, links and host state.
export function createOrchestrator(options: OrchestratorOptions): RuntimeOrchestrator {
  const { store } = options;
  const logger = options.logger ?? silentLogger;
  /** Actors by the canonical spelling of their thread id ("a:b" is "a:b:default": one directory). */
  const actors = new Map<string, ThreadActor>();
  const links = new Map<string, ChannelLink>();
  const listeners = new Set<OrchestratorListener>();
  const savedStatuses = new SavedStatuses(store);
  /** Clears, an idle timeout after `start`, the threads the inbox holds ids of and no actor. */
  let unusedTimer: NodeJS.Timeout | undefined;
  const { host, stopNow } = createHost(options, logger, {
    actors,
    links,
    listeners,
    savedStatuses,
  });

  /**
   * The thread's actor, whichever way its id is spelt: two would run on the same files at once.
   * A new actor takes the spelling it is first addressed by.
   */
  const actorFor = (threadId: string): ThreadActor => {
    const key = canonicalThreadId(threadId);
    let actor = actors.get(key);
    if (!actor) {
      actor = new ThreadActor(host, threadId);
      actors.set(key, actor);
    }
    return actor;
  };

  const statusOf = (threadId: string) => {
    const status = threadStatus(threadId, actors, savedStatuses, options);
    const subagents = options.subagents?.(threadId);
    return subagents && subagents.length > 0 ? { ...status, subagents } : status;
  };

  const orchestrator: RuntimeOrchestrator = {
    send(spelling: string, message: ActorMessage): SendResult {
      try {
        if (host.stopping) {
          return { status: "refused", reason: "guppy is shutting down", shuttingDown: true };
        }
        const held = options.heldElsewhere?.(spelling);
        if (held !== undefined) return { status: "refused", reason: held, heldElsewhere: true };
        // A channel's message id is checked against the thread's recent ones (none: no cost).
        const checked = message.messageId;
        const fresh =
          (checked !== undefined || message.type !== "prompt") &&
          !actors.has(canonicalThreadId(spelling));
        const actor = actorFor(spelling);
        if (actor.isDuplicate(checked)) {
          if (fresh) host.forget(actor);
          return { status: "duplicate" };
        }
        if (message.type === "prompt") {
          // A channel's prompt (it brings a handle) names the thread as that channel does.
          if (message.thread && spelling !== actor.threadId && !actor.occupied()) {
            actor.rename(spelling);
          }
          return actor.accept(message);
        }
        if (message.type === "steer") return actor.steer(message, fresh);
        return actor.abort(message.messageId, fresh);
      } catch (error) {
        return { status: "refused", reason: oneLine(String((error as Error)?.message ?? error)) };
      }
    },

    async sendToChannel(adapterId, channelId, text, sender) {
      const link = links.get(adapterId);
      if (!link?.postToChannel) {
        logger.warn(`sendToChannel: no channel "${adapterId}" that can open threads`);
        return undefined;
      }
      try {
        const threadId = await link.postToChannel(channelId, text);
        const result = orchestrator.send(threadId, {
          type: "prompt",
          text,
          thread: link.threadHandle(threadId),
          ...sender,
        });
        if (result.status !== "queued") {
          logger.warn(`sendToChannel: the prompt for ${threadId} was not queued`, { result });
        }
        return threadId;
      } catch (error) {
        logger.error(`sendToChannel ${adapterId}:${channelId} failed`, { error: String(error) });
        return undefined;
      }
    },

    async postMessage(target, text, from) {
      return postMessage(
        {
          store,
          logger,
          links,
          emit: host.emit,
          heldElsewhere: options.heldElsewhere,
          handleOf: (threadId) =>
            actors.get(canonicalThreadId(threadId))?.handle ?? host.linkHandle(threadId),
          exists: (threadId) => existsSync(store.threadDir(threadId)),
        },
        target,
        text,
        from,
      );
    },

    registerChannel(link) {
      links.set(link.adapterId, link);
    },

    threadHandle: (threadId) => host.linkHandle(threadId),

    async reset(threadId, messageId): Promise<ResetResult> {
      const held = options.heldElsewhere?.(threadId);
      if (held !== undefined) throw new ThreadHeldError(held);
      const fresh = !actors.has(canonicalThreadId(threadId));
      return actorFor(threadId).reset(messageId, fresh);
    },

    async compact(threadId, messageId): Promise<CompactResult> {
      const held = options.heldElsewhere?.(threadId);
      if (held !== undefined) throw new ThreadHeldError(held);
      const fresh = !actors.has(canonicalThreadId(threadId));
      return actorFor(threadId).compact(messageId, fresh);
    },

    status: statusOf,

    threads(options) {
      // One entry per thread: the directories' ids are canonical, and so are the actors' keys.
      const ids = new Map<string, string>();
      if (options?.onDisk !== false) for (const id of store.listThreads()) ids.set(id, id);
      for (const [key, actor] of actors) ids.set(key, actor.threadId);
      return [...ids.values()].sort().map(statusOf);
    },

    async start() {
      if (host.started) return;
      host.started = true;
      replayInbox(host, actors, actorFor, options.heldElsewhere);
      unusedTimer = clearUnusedLater(host, actors);
    },

    async shutdown(graceMs) {
      if (host.stopping) return;
      host.stopping = true;
      stopNow();
      clearTimeout(unusedTimer);
      await shutdownActors(host, actors, graceMs);
    },

    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    counters() {
      let loaded = 0;
      let running = 0;
      for (const actor of actors.values()) {
        if (actor.runner) loaded++;
        if (actor.running) running++;
      }
      return {
        ...host.counts,
        activeActors: actors.size,
        loadedRunners: loaded,
        runningNow: running,
        waitingForSlot: host.limiter.waiting,
      };
    },
  };
  return orchestrator;
}

/** The registry an orchestrator's actors reach through their host. */
interface Registry {
  actors: Map<string, ThreadActor>;
  links: ReadonlyMap<string, ChannelLink>;
  listeners: ReadonlySet<OrchestratorListener>;
  savedStatuses: SavedStatuses;
}

/** What the actors share: inbox, limiter, counters, flags, and the way to listeners and channels. */
function createHost(
  options: OrchestratorOptions,
  logger: Logger,
  { actors, links, listeners, savedStatuses }: Registry,
): { host: ActorHost; stopNow: () => void } {
  const { store } = options;
  let stopNow: () => void = () => {};

  const emit = (event: OrchestratorEvent) => {
    for (const listener of listeners) {
      try {
        listener(event);
      } catch (error) {
        logger.warn("An orchestrator listener threw", { error: String(error) });
      }
    }
  };

  const linkHandle = (threadId: string): ThreadHandle | undefined => {
    try {
      return links.get(parseThreadId(threadId).adapter)?.threadHandle(threadId);
    } catch (error) {
      logger.warn(`The channel could not give a handle for ${threadId}`, { error: String(error) });
      return undefined;
    }
  };

  const host: ActorHost = {
    store,
    inbox: createInbox({
      store,
      logger,
      ...(options.inbox ? { location: options.inbox } : {}),
    }),
    limiter: options.limiter ?? createConcurrencyLimiter(options.maxConcurrent),
    logger,
    createRunner: options.createRunner,
    queueDepth: options.queueDepth,
    idleTimeoutMs: options.idleTimeoutMs,
    backfillLimit: options.backfillLimit ?? 50,
    contextWindow: options.contextWindow,
    timezone: options.timezone,
    counts: { accepted: 0, busy: 0, runs: 0, replayed: 0, reported: 0 },
    started: false,
    stopping: false,
    stopped: new Promise<undefined>((resolve) => {
      stopNow = () => resolve(undefined);
    }),
    emit,
    notify(threadId, handle, text, toSender) {
      emit({ type: "notice", threadId, text });
      const target = handle ?? linkHandle(threadId);
      if (!target) {
        logger.warn(`No channel to tell ${threadId}: ${text}`);
        return;
      }
      try {
        // Only the handle given for this message knows its sender (a linked handle does not).
        const said =
          toSender && handle?.acknowledge ? handle.acknowledge(text) : target.notice(text);
        Promise.resolve(said).catch((error: unknown) =>
          logger.warn(`Could not post a notice to ${threadId}`, { error: String(error) }),
        );
      } catch (error) {
        logger.warn(`Could not post a notice to ${threadId}`, { error: String(error) });
      }
    },
    linkHandle,
    forget(actor) {
      const key = canonicalThreadId(actor.threadId);
      if (actors.get(key) === actor) actors.delete(key);
    },
    forgetSavedStatus: (key) => savedStatuses.forget(key),
  };
  return { host, stopNow };
}
