import type { ThreadFigures } from "../store/thread-status-file.js";
import type { ActorMessage, ThreadHandle } from "./thread-handle.js";

/**
 * What `Orchestrator.send` did with a message. A prompt is on disk (the durable inbox) before
 * `send` returns "queued", so a channel may acknowledge it; "busy" means the thread's queue was
 * full and the sender has been told so (the prompt is logged and counted, not silently lost).
 */
export type SendResult =
  | {
      status: "queued";
      inboxId: string;
      position: number;
      /** With `deferSync`: resolves once the prompt is fsync'd (rejects if that failed). */
      synced?: Promise<void>;
    }
  /** `queued`: the thread's prompts not running yet, as `ThreadStatus.queued` counts them. */
  | { status: "busy"; queued: number }
  /** The thread has accepted a message with this `messageId` already (a message delivered again). */
  | { status: "duplicate" }
  | { status: "delivered" }
  | { status: "dropped"; reason: string }
  /**
   * Not accepted. `shuttingDown`: because guppy is shutting down — a channel that keeps the
   * message on disk until it is accepted hands it over again after the restart. `heldElsewhere`:
   * another process runs the thread now (a `guppy chat` holds its session).
   */
  | { status: "refused"; reason: string; shuttingDown?: true; heldElsewhere?: true };

/** Why `reset` or `compact` refused: another process runs the thread (`heldElsewhere`). */
export class ThreadHeldError extends Error {
  override name = "ThreadHeldError";
}

/** What `/new` did: archived the context (its path, when there was one), or nothing (a duplicate). */
export type ResetResult = { status: "reset"; archived?: string } | { status: "duplicate" };

/** What `/compact` did: a one-line report of the compaction, or nothing (a duplicate). */
export type CompactResult = { status: "compacted"; report: string } | { status: "duplicate" };

/** A thread as `/status`, `GET /v1/threads` and the gateway's logs see it. */
export interface ThreadStatus extends ThreadFigures {
  threadId: string;
  /**
   * running: a run is under way; waiting: none is, and prompts wait (for a concurrency slot,
   * their attachments, a /compact, or — with a slot — the thread's files to open); idle: agent
   * loaded, nothing runs or waits; inactive: no agent loaded, nothing waits.
   */
  state: "inactive" | "idle" | "waiting" | "running";
  /**
   * Prompts accepted and not running yet (queued behind the run, or waiting for a slot or their
   * attachments; not one that has its slot): what GUPPY_QUEUE_DEPTH bounds, as a "busy" answer's `queued` counts them.
   */
  queued: number;
  /** ISO time of the last message or run end. */
  lastActivity?: string;
  model: string;
}

/**
 * A channel as the orchestrator knows it: how to reach a thread when no live handle came with
 * the prompt (a prompt replayed from the durable inbox after a restart), and how to open a new
 * thread in a channel (`sendToChannel`).
 */
export interface ChannelLink {
  /** The `adapter` part of thread ids this channel owns (`telegram`, `slack`, `http`, `cli`). */
  readonly adapterId: string;
  threadHandle(threadId: string): ThreadHandle;
  /** Posts a top-level message to a channel, creating a thread; resolves to its thread id. */
  postToChannel?(channelId: string, text: string): Promise<string>;
}

/** The single front door (seed 002): every channel, the event bus and the CLI send through it. */
export interface Orchestrator {
  /**
   * Routes a message to the thread's actor, activating it on demand. Never throws. A message
   * whose `messageId` the thread has accepted before (a prompt pending, answered, or in its recent
   * log; a steer, abort, `/new` or `/compact` it acted on) is dropped — "duplicate", nothing run,
   * steered or stopped, nobody told: a channel delivered it again. A steer or abort with a
   * `messageId` is remembered whether or not something was running.
   */
  send(threadId: string, message: ActorMessage): SendResult;
  /** Opens a thread in a channel with `text` and runs it as a prompt; resolves to the thread id. */
  sendToChannel(adapterId: string, channelId: string, text: string): Promise<string | undefined>;
  registerChannel(link: ChannelLink): void;
  /**
   * `/new`: archives the thread's context once no run is active. With the channel's `messageId`,
   * a message the thread has already accepted (the same `/new` delivered again after a restart)
   * does nothing and resolves to "duplicate".
   */
  reset(threadId: string, messageId?: string): Promise<ResetResult>;
  /**
   * `/compact`: forces a compaction of the thread's context once no run is active; resolves to a
   * one-line report. With the channel's `messageId`, a message the thread has already accepted
   * does nothing and resolves to "duplicate".
   */
  compact(threadId: string, messageId?: string): Promise<CompactResult>;
  status(threadId: string): ThreadStatus;
  /**
   * Every thread known on disk or in memory. `onDisk: false`: the threads in memory only, without
   * listing the directories (a caller that lists them itself, off this thread: the HTTP API).
   */
  threads(options?: { onDisk?: boolean }): ThreadStatus[];
  /** Replays the durable inbox: accepted prompts that were never answered are run or reported. */
  start(): Promise<void>;
  /** Stops accepting prompts, lets running turns finish for up to `graceMs`, then aborts them and saves. */
  shutdown(graceMs: number): Promise<void>;
}
