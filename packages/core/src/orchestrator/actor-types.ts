import type { Inbox } from "../inbox/create-inbox.js";
import type { AcceptedRecord, PendingPrompt } from "../inbox/inbox-record.js";
import type { Logger } from "../logging/logger.js";
import type { AgentRunner } from "../runner/types.js";
import type { Store } from "../store/create-store.js";
import type { PromptContent, ThreadHandle } from "../types.js";
import type { ConcurrencyLimiter } from "./concurrency-limiter.js";
import type { LogTail } from "./log-tail.js";
import type { OrchestratorCounters, OrchestratorEvent } from "./types.js";

/** What a thread's actor shares with the other actors of its orchestrator. */
export interface ActorHost {
  readonly store: Store;
  readonly inbox: Inbox;
  readonly limiter: ConcurrencyLimiter;
  readonly logger: Logger;
  /** Activation: builds the thread's runner (it loads the saved context). */
  readonly createRunner: (threadId: string) => AgentRunner;
  readonly queueDepth: number;
  readonly idleTimeoutMs: number;
  /** At most this many log entries are backfilled before a run (the newest). */
  readonly backfillLimit: number;
  readonly contextWindow: number | undefined;
  /** The zone backfilled messages' times are told in (GUPPY_TIMEZONE, else the system's). */
  readonly timezone: string | undefined;
  readonly counts: Pick<
    OrchestratorCounters,
    "accepted" | "busy" | "runs" | "replayed" | "reported"
  >;
  /** Set by `start`: prompts accepted before it wait for the replay. */
  started: boolean;
  /** Set when `shutdown` begins: nothing new starts. */
  stopping: boolean;
  /** Resolves when `shutdown` begins: a prompt waiting for its content stops waiting then. */
  readonly stopped: Promise<undefined>;
  emit(event: OrchestratorEvent): void;
  /** Tells the thread (through `handle`, else its channel link) and the listeners. */
  /** `toSender`: a reply to the handle's sender alone (ThreadHandle.acknowledge, where it has one). */
  notify(
    threadId: string,
    handle: ThreadHandle | undefined,
    text: string,
    toSender?: boolean,
  ): void;
  /** The thread's handle from its channel link, when no live one came with the prompt. */
  linkHandle(threadId: string): ThreadHandle | undefined;
  /** Drops the actor from the registry, if it is still the one kept for its thread. */
  forget(actor: ActorState): void;
  /** The thread's status.json changed: a cached read of it is stale. */
  forgetSavedStatus(key: string): void;
}

/** A prompt accepted for a thread, from its acceptance until its run ends. */
export interface QueuedPrompt {
  record: AcceptedRecord;
  thread?: ThreadHandle;
  /** Set when the prompt comes from the inbox of an earlier process and had started there. */
  replay?: PendingPrompt;
  /** What the channel is still fetching for it (attachments): awaited before its run. */
  content?: Promise<PromptContent>;
  /** What `content` resolved to: the run's text and images instead of the record's. */
  ready?: PromptContent;
  /** For prompts replayed at `start`: their place in the order accepted, across threads. */
  rank?: number;
}

/** A thread's actor as its drain loop and runs read and update it (`ThreadActor`). */
export interface ActorState {
  /**
   * The spelling the thread was first addressed by (its channel's: Telegram's "telegram:<chat>"
   * has no thread part); the registry keys actors by the canonical one.
   */
  readonly threadId: string;
  queue: QueuedPrompt[];
  /** The prompt taken off the queue: waiting for its attachments or a slot, or running. */
  current: QueuedPrompt | undefined;
  /**
   * Set while `current` waits for its attachments or a slot, so it counts among the queued
   * prompts; not once it has its slot.
   */
  currentWaits: boolean;
  runner: AgentRunner | undefined;
  running: boolean;
  lastActivity: number;
  /** The handle of the thread's latest channel prompt. */
  handle: ThreadHandle | undefined;
  /** The thread's log.jsonl as read so far (backfill), while the actor is active. */
  log: LogTail | undefined;
  /** Set while `/compact` runs on the runner: prompts wait for it. */
  compacting: Promise<void> | undefined;
  /** Run synchronously when the current run ends (reset and compact wait for it). */
  afterRun: Array<() => void> | undefined;
  /** The runner, created (and the thread activated) when it has none. */
  activate(): AgentRunner;
}
