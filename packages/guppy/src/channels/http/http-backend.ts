import { existsSync } from "node:fs";
import {
  type CompactResult,
  type Orchestrator,
  type OrchestratorEvent,
  type OrchestratorListener,
  type ResetResult,
  type RunnerEvent,
  type SendResult,
  type Store,
  type ThreadHandle,
  ThreadHeldError,
} from "@guppy/core";
import { createFileThreadLog, type ThreadLogReader } from "@guppy/core/state";
import { canonicalThreadId } from "@guppy/core/thread-layout";
import type { UsageGrouping, UsageReport } from "@guppy/core/usage";
import type { AccessAnswer, AccessRequest } from "../../access/access-types.js";
import type { GatewayStatus } from "../../gateway/gateway-status.js";
import { createAnswerText } from "./answer-text.js";
import {
  createEventCalls,
  type EventChangeResult,
  type EventFilesConfig,
  type EventListing,
  type EventRequest,
} from "./event-calls.js";

/**
 * Which runner events a prompt's reply wants: all (a streamed answer), or only usage and end (a
 * plain answer, fewer crossing to the worker; the end's `text` is the whole answer).
 */
export type ReplyEvents = "all" | "end";

/** Where the events of the run a prompt starts go (chat completions waits on them). */
export interface PromptReply {
  events: ReplyEvents;
  onEvent(event: RunnerEvent): void;
  /** Guppy's own short answer instead of a run (busy, interrupted, shutting down). */
  notice(text: string): void;
}

/**
 * What a route sends to a thread: a prompt (acknowledged once on disk), a steer or an abort —
 * each with the client's `message_id`, if it gave one (a repeat of it is a duplicate).
 */
export type HttpMessage =
  | {
      type: "prompt";
      text: string;
      userId: string;
      userName: string;
      messageId?: string;
      reply?: PromptReply;
    }
  | { type: "steer"; text: string; messageId?: string }
  | {
      type: "abort";
      messageId?: string;
      /**
       * Stop only the run of this prompt (its inbox id; one sent with a `reply`): now if it
       * runs, as it starts if it waits, not at all once it ended — never a later prompt's run.
       * Checked on the orchestrator's thread, where the run's start and end are known as they
       * happen (a worker's view of them is a message behind). Its end is logged as stopped.
       */
      prompt?: string;
    };

/** `/new` or `/compact` of a thread (POST /v1/threads/{id}/new, …/compact). */
export interface ThreadCommand {
  threadId: string;
  command: "new" | "compact";
  messageId?: string;
}

/** What a command did; "held": a `guppy chat` has the thread open (`reason` says so). */
export type ThreadCommandResult = ResetResult | CompactResult | { status: "held"; reason: string };

/** `threadId`: the id's one spelling ("http:api" is "http:api:default"), for routes to use. */
export type ThreadLookup =
  | { status: "known"; threadId: string }
  | { status: "unknown"; threadId: string }
  | { status: "invalid"; reason: string };

/** A thread as GET /v1/threads lists it. */
export type ThreadSummary = ReturnType<Orchestrator["threads"]>[number];

/** What `threadsInMemory` gives: the threads with an actor, by canonical id. */
export interface InMemoryThreads {
  threads: Array<{ id: string; status: ThreadSummary }>;
  after?: string;
}

/**
 * The backend's calls that are one request and one answer, each taking one argument at most:
 * across the worker's port they go by name (backend-rpc.ts), so a new one is an entry here and
 * its implementation in createLocalBackend.
 */
export interface BackendCalls {
  /** Is `threadId` valid and seen (in memory or on disk)? Gives the gateway's spelling. */
  thread(threadId: string): Promise<ThreadLookup>;
  /** The threads in memory by canonical id, and `after` (a GET /v1/threads cursor) canonical. */
  threadsInMemory(after?: string): Promise<InMemoryThreads>;
  /** `orchestrator.status` of each thread (an unloaded one: its status.json, read once). */
  statuses(threadIds: string[]): Promise<ThreadSummary[]>;
  /** `orchestrator.reset` or `.compact`: resolves once done (after the running turn). */
  command(request: ThreadCommand): Promise<ThreadCommandResult>;
  /** The gateway's status (GET /v1/status); undefined where the gateway gave none. */
  gatewayStatus(): Promise<GatewayStatus | undefined>;
  /** The usage ledger's report (GET /v1/usage); undefined where the gateway keeps none. */
  usageReport(request: UsageRequest): Promise<UsageReport | undefined>;
  /** The scheduled events with their next run (GET /v1/events); undefined: no events folder. */
  listEvents(): Promise<EventListing | undefined>;
  /** `addEvent` or `editEvent` on the event files (POST /v1/events, PATCH /v1/events/{id}). */
  changeEvent(request: EventRequest): Promise<EventChangeResult>;
  /** Removes an event file (DELETE /v1/events/{id}); false if there was none. */
  removeEvent(id: string): Promise<boolean>;
  /** An access route's request (/v1/access/{channel}…); undefined where the gateway has none. */
  access(request: AccessRequest): Promise<AccessAnswer | undefined>;
}

/** GET /v1/usage's question of the ledger: the last `days` local days, totalled `by`. */
export interface UsageRequest {
  days: number;
  by: UsageGrouping;
}

/**
 * What the HTTP API's routes need of the gateway: asynchronous because the routes run in a worker
 * thread (http-worker.ts) and reach the orchestrator on the main thread through backend-rpc.ts.
 */
export interface HttpBackend extends BackendCalls {
  /** `orchestrator.send`; a prompt's fsync runs off the event loop (`synced` says when done). */
  send(threadId: string, message: HttpMessage): Promise<SendResult>;
  /** The ids of the threads with a directory under GUPPY_HOME (the worker lists them itself). */
  threadIdsOnDisk(): Promise<string[]>;
  /** Threads' logs and contexts, read through the state seam where the routes run. */
  readonly log: ThreadLogReader;
  /** One thread's orchestrator events (the SSE stream); returns the unsubscribe. */
  subscribe?(threadId: string, listener: (event: OrchestratorEvent) => void): () => void;
}

export interface LocalBackendOptions {
  orchestrator: Pick<Orchestrator, "send" | "status" | "threads" | "reset" | "compact">;
  store: Pick<Store, "home" | "threadDir" | "listThreads" | "appendLog">;
  subscribe?: (listener: OrchestratorListener) => () => void;
  gatewayStatus?: () => GatewayStatus;
  /** Reads the usage ledger (readUsageReport of the gateway's home and time zone). */
  usageReport?: (request: UsageRequest) => UsageReport;
  /** `<home>/events` and GUPPY_TIMEZONE, for the /v1/events routes (none: they answer 503). */
  events?: EventFilesConfig;
  access?: (request: AccessRequest) => AccessAnswer;
}

/** The backend as direct calls on the orchestrator and store of this thread. */
export function createLocalBackend(options: LocalBackendOptions): HttpBackend {
  const { orchestrator, store, subscribe } = options;
  const runs = createPromptRuns(orchestrator, store);
  return {
    send: async (threadId, message) => {
      if (message.type === "abort" && message.prompt !== undefined) {
        return runs.stop(threadId, message.prompt);
      }
      if (message.type !== "prompt") return orchestrator.send(threadId, message);
      const run = message.reply ? runs.track(threadId) : undefined;
      const result = orchestrator.send(threadId, {
        type: "prompt",
        text: message.text,
        userId: message.userId,
        userName: message.userName,
        ...(message.messageId ? { messageId: message.messageId } : {}),
        // The answer (or the 202, once `synced`) is the acknowledgement: the fsync runs
        // off the event loop meanwhile.
        deferSync: true,
        ...(message.reply && run
          ? { thread: run.watch(replyHandle(threadId, message.reply)) }
          : {}),
      });
      if (run && result.status === "queued") run.queued(result.inboxId);
      return result;
    },
    thread: async (id) => {
      let canonical: string;
      try {
        canonical = canonicalThreadId(id);
      } catch (error) {
        return { status: "invalid", reason: (error as Error).message };
      }
      // A thread with an actor is named as its actor is (the spelling its channel uses).
      const status = orchestrator.status(canonical);
      const seen = status.lastActivity !== undefined || existsSync(store.threadDir(canonical));
      return { status: seen ? "known" : "unknown", threadId: status.threadId };
    },
    threadsInMemory: async (after) => ({
      threads: orchestrator
        .threads({ onDisk: false })
        .map((status) => ({ id: canonicalThreadId(status.threadId), status })),
      ...(after !== undefined ? { after: canonicalThreadId(after) } : {}),
    }),
    threadIdsOnDisk: async () => store.listThreads(),
    statuses: async (threadIds) => threadIds.map((id) => orchestrator.status(id)),
    log: createFileThreadLog(store.home),
    command: async ({ threadId, command, messageId }) => {
      try {
        return command === "new"
          ? await orchestrator.reset(threadId, messageId)
          : await orchestrator.compact(threadId, messageId);
      } catch (error) {
        if (error instanceof ThreadHeldError) return { status: "held", reason: error.message };
        throw error;
      }
    },
    gatewayStatus: async () => options.gatewayStatus?.(),
    usageReport: async (request) => options.usageReport?.(request),
    ...createEventCalls(options.events),
    access: async (request) => options.access?.(request),
    ...(subscribe ? { subscribe: threadSubscriptions(subscribe) } : {}),
  };
}

/**
 * Per-thread subscriptions over the gateway's event stream: one listener on it while any stream
 * is open, which hands an event to its thread's subscribers only (not every subscriber looking
 * at every event). Threads are matched by canonical id: events carry the actor's spelling.
 */
function threadSubscriptions(
  subscribe: (listener: OrchestratorListener) => () => void,
): NonNullable<HttpBackend["subscribe"]> {
  const byThread = new Map<string, Set<(event: OrchestratorEvent) => void>>();
  let stop: (() => void) | undefined;
  const dispatch = (event: OrchestratorEvent) => {
    const listeners = byThread.get(canonicalThreadId(event.threadId));
    if (listeners) for (const listener of [...listeners]) listener(event);
  };
  return (threadId, listener) => {
    const key = canonicalThreadId(threadId);
    let listeners = byThread.get(key);
    if (!listeners) {
      listeners = new Set();
      byThread.set(key, listeners);
    }
    listeners.add(listener);
    stop ??= subscribe(dispatch);
    return () => {
      if (!listeners.delete(listener)) return;
      if (listeners.size === 0) byThread.delete(key);
      if (byThread.size === 0) {
        stop?.();
        stop = undefined;
      }
    };
  };
}

function replyHandle(threadId: string, reply: PromptReply): ThreadHandle {
  const notice = (text: string) => reply.notice(text);
  if (reply.events === "all") return { threadId, onEvent: (event) => reply.onEvent(event), notice };
  // The answer is built here from the events that do not cross (text deltas, tool calls).
  const answer = createAnswerText();
  return {
    threadId,
    onEvent(event) {
      answer.add(event);
      if (event.type === "usage") reply.onEvent(event);
      else if (event.type === "run_end") reply.onEvent({ ...event, text: answer.text() });
    },
    notice,
  };
}

/** Where a tracked prompt's run stands. */
interface PromptRun {
  threadId: string;
  inboxId?: string;
  state: "waiting" | "running" | "ended";
  /** A stop was asked for: at its start if it waits; its end is logged as stopped. */
  stopWanted: boolean;
}

/** What the thread's log says of a run its disconnected client stopped. */
export const DISCONNECT_STOP_NOTICE =
  "Stopped: the client of this streamed chat completion disconnected before the answer was complete.";

/**
 * The runs of prompts sent with a reply (chat completions), by inbox id, while they wait or run:
 * `stop` aborts such a run and no other (an abort of the thread would stop whatever runs when
 * it arrives — a later prompt's run, if this one ended meanwhile).
 */
function createPromptRuns(
  orchestrator: Pick<Orchestrator, "send">,
  store: Pick<Store, "appendLog">,
) {
  const byInboxId = new Map<string, PromptRun>();
  const abortNow = (run: PromptRun): SendResult => {
    run.stopWanted = true;
    return orchestrator.send(run.threadId, { type: "abort" });
  };
  const ended = (run: PromptRun) => {
    run.state = "ended";
    if (run.inboxId !== undefined) byInboxId.delete(run.inboxId);
  };
  return {
    track(threadId: string) {
      const run: PromptRun = { threadId, state: "waiting", stopWanted: false };
      return {
        queued(inboxId: string) {
          run.inboxId = inboxId;
          if (run.state !== "ended") byInboxId.set(inboxId, run);
        },
        watch(handle: ThreadHandle): ThreadHandle {
          return {
            ...handle,
            onEvent(event) {
              if (event.type === "run_start") {
                run.state = "running";
                // Once the run's own abort controller is in place (its prompt call has begun).
                if (run.stopWanted) setImmediate(() => run.state === "running" && abortNow(run));
              } else if (event.type === "run_end") {
                ended(run);
                if (run.stopWanted && event.stopReason === "aborted") {
                  try {
                    store.appendLog(run.threadId, {
                      date: new Date().toISOString(),
                      messageId: `notice-${run.inboxId ?? Date.now()}`,
                      userId: "guppy",
                      userName: "guppy",
                      text: DISCONNECT_STOP_NOTICE,
                      isBot: true,
                    });
                  } catch {
                    // A log that cannot be written (a full disk) is the store's to report.
                  }
                }
              }
              handle.onEvent?.(event);
            },
            notice(text) {
              // Instead of a run (shutting down, not saved): a running one ends with run_end.
              if (run.state === "waiting") ended(run);
              return handle.notice(text);
            },
          };
        },
      };
    },
    stop(threadId: string, inboxId: string): SendResult {
      const run = byInboxId.get(inboxId);
      if (!run || run.threadId !== threadId) {
        return { status: "dropped", reason: "that prompt's run has ended" };
      }
      if (run.state === "running") return abortNow(run);
      run.stopWanted = true;
      return { status: "delivered" };
    },
  };
}
