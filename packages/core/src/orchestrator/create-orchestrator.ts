import { statSync } from "node:fs";
import type { ImageContent } from "@mariozechner/pi-ai";
import { describeCompaction } from "../context/describe-compaction.js";
import { createInbox, type Inbox, type InboxLocation } from "../inbox/create-inbox.js";
import type { AcceptedRecord, PendingPrompt } from "../inbox/inbox-record.js";
import { type Logger, silentLogger } from "../logging/logger.js";
import type { AgentRunner } from "../runner/create-agent-runner.js";
import { oneLine } from "../runner/message-text.js";
import type { RunnerEvent } from "../runner/runner-events.js";
import type { Store } from "../store/create-store.js";
import type { LogEntry } from "../store/log-entry.js";
import { canonicalThreadId, parseThreadId } from "../store/thread-id.js";
import {
  type SavedThreadStatus,
  type ThreadFigures,
  threadFigures,
} from "../store/thread-status-file.js";
import { backfillMessage, interruptedRunMessage, readCursor } from "./backfill.js";
import { createConcurrencyLimiter } from "./concurrency-limiter.js";
import { createLogTail, type LogTail } from "./log-tail.js";
import type {
  OrchestratorCounters,
  OrchestratorEvent,
  OrchestratorListener,
} from "./orchestrator-events.js";
import type {
  ChannelLink,
  CompactResult,
  Orchestrator,
  ResetResult,
  SendResult,
  ThreadStatus,
} from "./orchestrator-types.js";
import { ThreadHeldError } from "./orchestrator-types.js";
import { loadRecentMessageIds, type RecentMessageIds } from "./recent-message-ids.js";
import type { ActorMessage, PromptContent, ThreadHandle } from "./thread-handle.js";

export interface OrchestratorOptions {
  store: Store;
  /** Activation: builds the thread's runner (it loads the saved context). */
  createRunner(threadId: string): AgentRunner;
  /** GUPPY_MAX_CONCURRENT: runs at once across all threads. */
  maxConcurrent: number;
  /**
   * GUPPY_QUEUE_DEPTH: how many prompts of a thread may wait (accepted, not running yet: queued
   * behind its run, or waiting for a concurrency slot or their attachments); one more is "busy".
   */
  queueDepth: number;
  /** GUPPY_IDLE_TIMEOUT_SECONDS × 1000: an idle thread's runner is dropped after this. */
  idleTimeoutMs: number;
  /** Shown by `status()` for threads whose runner is not loaded. */
  modelName?: string;
  contextWindow?: number;
  logger?: Logger;
  /** The durable inbox's journal and lock, if not the home's (`guppy chat`: its session's). */
  inbox?: InboxLocation;
  /**
   * Why another process runs the thread now (a `guppy chat` holds its session), or undefined:
   * `send`, `reset` and `compact` of such a thread refuse with that reason.
   */
  heldElsewhere?(threadId: string): string | undefined;
}

/** The orchestrator as `guppy serve` uses it: the contract plus events and counters. */
export interface RuntimeOrchestrator extends Orchestrator {
  subscribe(listener: OrchestratorListener): () => void;
  counters(): OrchestratorCounters;
}

interface QueuedPrompt {
  record: AcceptedRecord;
  thread?: ThreadHandle;
  /** Set when the prompt comes from the inbox of an earlier process and had started there. */
  replay?: PendingPrompt;
  /** What the channel is still fetching for it (attachments): awaited before its run. */
  content?: Promise<PromptContent>;
  /** What `content` resolved to: the run's text and images instead of the record's. */
  ready?: PromptContent;
  /**
   * Set for the prompts `start` found in the inbox: their place in the order accepted, across
   * threads. The limiter serves them in that order, before any prompt sent later.
   */
  rank?: number;
}

/** One thread's actor, kept while the thread is active (evicted at its idle timeout: `deactivate`). */
interface Actor {
  threadId: string;
  queue: QueuedPrompt[];
  /** The prompt taken off the queue: waiting for its attachments or a concurrency slot, or run. */
  current?: QueuedPrompt;
  /**
   * Set while `current` waits — for its attachments, or for a slot the limiter had none free for —
   * so it counts among the thread's queued prompts. Not while it has its slot and is about to run
   * (the same turn, or once a new thread's files are open).
   */
  currentWaits?: boolean;
  runner?: AgentRunner;
  running: boolean;
  drain?: Promise<void>;
  handle?: ThreadHandle;
  idleTimer?: NodeJS.Timeout;
  lastActivity: number;
  snapshot?: ThreadFigures;
  /** The thread's log.jsonl as read so far (backfill), while the actor is active. */
  log?: LogTail;
  /** Set while `/compact` runs on the thread's runner: prompts wait for it (see `drain`). */
  compacting?: Promise<void>;
  /** Run synchronously when the current run ends (reset / compact wait for it). */
  afterRun?: Array<() => void>;
  /** The channel message ids it has accepted lately (see `recentIds`). */
  recent?: RecentMessageIds;
}

/** Threads' status.json kept read (see `savedStatus`): past this the cache starts over. */
const MAX_SAVED_STATUSES = 65_536;

/**
 * What the sender of a message kept for the next start is told at a shutdown: a prompt still
 * queued here, or one a channel keeps on disk (Telegram's held updates) when this refuses it.
 */
export const RESTART_NOTICE =
  "guppy is restarting: your message is saved and will be answered when it is back.";

const busyText = (queued: number) =>
  `This thread already has ${queued} ${queued === 1 ? "message" : "messages"} waiting for an answer, so this one was not queued; please send it again in a moment.`;

/**
 * The single front door (seed 002): one virtual actor per thread, activated on demand,
 * deactivated after an idle timeout; prompts go through the durable inbox and a global FIFO
 * concurrency limit; steer and abort bypass the queue.
 */
export function createOrchestrator(options: OrchestratorOptions): RuntimeOrchestrator {
  const { store } = options;
  const logger = options.logger ?? silentLogger;
  const inbox: Inbox = createInbox({
    store,
    logger,
    ...(options.inbox ? { location: options.inbox } : {}),
  });
  const limiter = createConcurrencyLimiter(options.maxConcurrent);
  const actors = new Map<string, Actor>();
  const links = new Map<string, ChannelLink>();
  /**
   * Threads' status.json as read for `status` while no agent of theirs was loaded (null: none),
   * by canonical id. An entry goes when its actor saves a new one.
   */
  const savedStatuses = new Map<string, SavedThreadStatus | null>();
  const listeners = new Set<OrchestratorListener>();
  const counts = { accepted: 0, busy: 0, runs: 0, replayed: 0, reported: 0 };
  let started = false;
  let stopping = false;
  /** Clears, at the idle timeout after `start`, the threads the journal holds ids for and no actor. */
  let unusedTimer: NodeJS.Timeout | undefined;
  /** Resolves when `shutdown` begins: a prompt waiting for its content stops waiting then. */
  let stopNow: () => void = () => {};
  const stopped = new Promise<undefined>((resolve) => {
    stopNow = () => resolve(undefined);
  });

  const emit = (event: OrchestratorEvent) => {
    for (const listener of listeners) {
      try {
        listener(event);
      } catch (error) {
        logger.warn("An orchestrator listener threw", { error: String(error) });
      }
    }
  };

  const notify = (threadId: string, handle: ThreadHandle | undefined, text: string) => {
    emit({ type: "notice", threadId, text });
    const target = handle ?? linkHandle(threadId);
    if (!target) {
      logger.warn(`No channel to tell ${threadId}: ${text}`);
      return;
    }
    try {
      Promise.resolve(target.notice(text)).catch((error: unknown) =>
        logger.warn(`Could not post a notice to ${threadId}`, { error: String(error) }),
      );
    } catch (error) {
      logger.warn(`Could not post a notice to ${threadId}`, { error: String(error) });
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

  /**
   * The thread's actor, whichever way its id is spelt ("a:b" is "a:b:default": one directory, so
   * one actor — two would run on the same files at once). Actors are kept by the id's canonical
   * spelling; an actor's `threadId` is the spelling it was first addressed by (see `send`), the
   * one its channel knows the thread by (Telegram's "telegram:<chat>" has no thread part).
   */
  const actorFor = (threadId: string): Actor => {
    const key = canonicalThreadId(threadId);
    let actor = actors.get(key);
    if (!actor) {
      actor = { threadId, queue: [], running: false, lastActivity: Date.now() };
      actors.set(key, actor);
    }
    return actor;
  };
  /** The thread's recent message ids, read when first needed while its actor lives. */
  const recentIds = (actor: Actor): RecentMessageIds => {
    actor.recent ??= loadRecentMessageIds(
      store,
      actor.threadId,
      inbox.promptIds(actor.threadId),
      logger,
    );
    return actor.recent;
  };
  /** Drops an actor created only to find a message was delivered again: nothing else of it runs. */
  const forget = (actor: Actor) => {
    const key = canonicalThreadId(actor.threadId);
    if (actors.get(key) === actor) actors.delete(key);
  };
  /** A message delivered again: dropped without a word to anyone but the debug log. */
  const isDuplicate = (actor: Actor, messageId: string | undefined): boolean => {
    if (messageId === undefined || !recentIds(actor).has(messageId)) return false;
    logger.debug(`Dropped a message ${actor.threadId} has already accepted`, { messageId });
    return true;
  };
  /**
   * A steer or abort that came with its channel message id acted (or was dropped, nothing
   * running): its id is kept in memory and, as a `ran` line, in the inbox journal until the thread
   * is cleared, so the message delivered again — after a restart too — neither steers twice nor
   * stops a later run. An actor made for it alone goes at the idle timeout (clearing that line);
   * without an id, at once (`fresh`: made for this message) — an abort or steer of every thread
   * in turn would otherwise have left an actor in memory for each.
   */
  const remember = (actor: Actor, messageId: string | undefined, fresh: boolean) => {
    if (messageId === undefined) {
      if (fresh && !occupied(actor)) forget(actor);
      return;
    }
    actor.recent?.add(messageId);
    inbox.handled(actor.threadId, messageId);
    if (!actor.idleTimer) idleIfQuiet(actor);
  };
  /** The canonical spelling of `threadId` (its actor's and saved status's key); none if invalid. */
  const keyOf = (threadId: string): string | undefined => {
    try {
      return canonicalThreadId(threadId);
    } catch {
      return undefined;
    }
  };

  /**
   * The thread's prompts accepted and not running yet: queued, and the one taken off the queue
   * while it waits for its attachments or a slot (not once it has its slot: a burst sent to an
   * idle thread in one turn has its first prompt about to run, not waiting). What the queue
   * depth, a busy answer and `status().queued` count.
   */
  const waitingPrompts = (actor: Actor) => actor.queue.length + (actor.currentWaits ? 1 : 0);

  /**
   * Something of the thread runs or waits: a run, a prompt waiting for its slot or queued, a
   * /compact. Such an actor is not deactivated, renamed or given an idle timeout.
   */
  const occupied = (actor: Actor) =>
    actor.running ||
    actor.current !== undefined ||
    actor.queue.length > 0 ||
    actor.compacting !== undefined;

  const touch = (actor: Actor) => {
    actor.lastActivity = Date.now();
    if (actor.idleTimer) {
      clearTimeout(actor.idleTimer);
      actor.idleTimer = undefined;
    }
  };

  const scheduleIdle = (actor: Actor) => {
    if (actor.idleTimer) clearTimeout(actor.idleTimer);
    actor.idleTimer = setTimeout(() => deactivate(actor, true), options.idleTimeoutMs);
    actor.idleTimer.unref?.();
  };

  /**
   * Drops the thread's runner and saves what it knew. `evict` (its idle timeout): the actor goes
   * too once its figures and log cursor are on disk — an inactive thread then costs nothing here,
   * and its status is read from status.json like that of a thread from before a restart.
   */
  const deactivate = (actor: Actor, evict = false) => {
    actor.idleTimer = undefined;
    if (occupied(actor)) return;
    let statusSaved = true;
    if (actor.runner) {
      actor.snapshot = threadFigures(actor.runner.stats());
      actor.runner = undefined;
      statusSaved = saveStatus(actor);
      emit({ type: "deactivated", threadId: actor.threadId });
    }
    actor.handle = undefined;
    actor.afterRun = undefined;
    actor.drain = undefined;
    const saved = saveCursor(actor.threadId, actor.log);
    actor.log = undefined;
    // Every prompt in the inbox is done: the file has nothing left to replay. (Kept when the
    // cursor could not be saved: its prompt ids keep their log lines out of the next backfill.)
    if (saved) inbox.clear(actor.threadId);
    store.closeFiles(actor.threadId);
    const key = canonicalThreadId(actor.threadId);
    if (evict && saved && statusSaved && actors.get(key) === actor) actors.delete(key);
  };

  /**
   * Starts the idle timeout of an actor a command (reset, compact) used outside any run: a run's
   * end starts it otherwise, and without it the runner and actor would stay until the next prompt.
   */
  const idleIfQuiet = (actor: Actor) => {
    if (!stopping && !actor.drain && !occupied(actor)) scheduleIdle(actor);
  };

  /** Writes the thread's figures to its status.json: its status with no agent loaded, after restarts. */
  const saveStatus = (actor: Actor): boolean => {
    if (!actor.snapshot) return true;
    try {
      savedStatuses.delete(canonicalThreadId(actor.threadId));
      store.saveStatus(actor.threadId, {
        lastActivity: new Date(actor.lastActivity).toISOString(),
        ...actor.snapshot,
      });
      return true;
    } catch (error) {
      logger.warn(`Could not save the status of ${actor.threadId}`, { error: String(error) });
      return false;
    }
  };

  /** What the thread's status.json says (read once), for a thread with no agent loaded. */
  const savedStatus = (key: string): SavedThreadStatus | undefined => {
    let saved = savedStatuses.get(key);
    if (saved === undefined) {
      saved = store.readStatus(key) ?? null;
      // Ids come from users too (API lookups of threads that do not exist): bounded.
      if (savedStatuses.size >= MAX_SAVED_STATUSES) savedStatuses.clear();
      savedStatuses.set(key, saved);
    }
    return saved ?? undefined;
  };

  const startDrain = (actor: Actor) => {
    if (!started || stopping || actor.drain) return;
    actor.drain = drain(actor).finally(() => {
      actor.drain = undefined;
      actor.lastActivity = Date.now();
      if (!stopping) {
        if (actor.queue.length > 0) startDrain(actor);
        else scheduleIdle(actor);
      }
    });
  };

  async function drain(actor: Actor): Promise<void> {
    /** The previous prompt's slot, kept for the next one (a replayed prompt: see `keepSlot`). */
    let kept = false;
    while (actor.queue.length > 0 && !stopping) {
      // A prompt sent while /compact runs waits for it: the runner does one thing at a time.
      if (actor.compacting) {
        if (kept) limiter.release();
        kept = false;
        await actor.compacting;
        continue;
      }
      const item = actor.queue.shift() as QueuedPrompt;
      actor.current = item;
      // Its attachments are still being fetched: it waits for them in its place, without a slot.
      if (item.content) {
        actor.currentWaits = true;
        const ready = await Promise.race([item.content.catch(() => undefined), stopped]);
        actor.currentWaits = false;
        if (stopping) {
          // Not started: it stays accepted in the inbox (with its saved text) for the next start.
          actor.current = undefined;
          actor.queue.unshift(item);
          break;
        }
        item.content = undefined;
        if (ready) item.ready = ready;
      }
      // The place in the FIFO is taken at once; a new thread's files are created meanwhile.
      const slot = kept || limiter.tryAcquire() ? undefined : waitForSlot(actor, item);
      kept = false;
      if (actor.runner) await slot;
      else {
        const files = openFiles(actor.threadId);
        await (slot ? Promise.all([slot, files]) : files);
      }
      try {
        if (stopping) {
          // Not started: it stays accepted in the inbox and runs after the next start.
          actor.queue.unshift(item);
          break;
        }
        if (actor.compacting) {
          // Began while this one waited for its slot: it goes back to the front, to wait above.
          actor.queue.unshift(item);
          continue;
        }
        await runItem(actor, item);
      } catch (error) {
        logger.error(`Actor ${actor.threadId} failed`, { error: String(error) });
      } finally {
        actor.current = undefined;
        kept = keepSlot(actor);
        if (!kept) limiter.release();
      }
    }
    if (kept) limiter.release();
  }

  /**
   * Whether the slot a prompt of the actor held goes straight on to its next one: a replayed
   * prompt (ranked, with nothing to wait for first) that the limiter would serve before every
   * waiter. Released first, the slot would go to a waiter behind it — another thread's later
   * prompt, or a live one — before this one could ask (an actor asks only once its previous
   * prompt ran), and replayed prompts would not run in the order accepted. A live prompt (no
   * rank) costs one check.
   */
  const keepSlot = (actor: Actor): boolean => {
    const next = actor.queue[0];
    return (
      next?.rank !== undefined &&
      next.content === undefined &&
      !stopping &&
      actor.compacting === undefined &&
      limiter.keepFor(next.rank)
    );
  };

  /** A slot for the actor's current prompt when none was free: it counts as waiting until then. */
  function waitForSlot(actor: Actor, item: QueuedPrompt): Promise<void> {
    actor.currentWaits = true;
    return limiter.acquire(item.rank).then(() => {
      actor.currentWaits = false;
    });
  }

  async function runItem(actor: Actor, item: QueuedPrompt): Promise<void> {
    const { threadId } = actor;
    const { record } = item;
    if (item.replay && item.replay.tools.length > 0) {
      reportInterrupted(actor, item, item.replay);
      return;
    }
    const handle = item.thread ?? actor.handle ?? linkHandle(threadId);
    const deliver = (event: RunnerEvent) => {
      if (event.type === "tool_call") inbox.tool(threadId, record.id, event.name, event.args);
      if (event.type === "run_end") inbox.done(threadId, record.id, event.stopReason);
      if (handle?.onEvent) {
        try {
          handle.onEvent(event);
        } catch (error) {
          logger.warn(`A channel's event handler threw on ${threadId}`, { error: String(error) });
        }
      }
      emit({ type: "runner", threadId, inboxId: record.id, event });
    };
    const fail = (message: string) => {
      deliver({ type: "error", kind: "internal", message });
      deliver({ type: "run_end", text: "", stopReason: "error", errorMessage: message });
    };

    // Its accepted line goes to the journal before the run writes anything (a prompt accepted in
    // this same turn, with a slot free, would otherwise run ahead of the turn-end write).
    inbox.written(record);
    let runner: AgentRunner;
    try {
      backfill(actor, item);
      runner = activate(actor);
    } catch (error) {
      logger.error(`Could not start the agent of ${threadId}`, { error: String(error) });
      fail(`Could not start the agent: ${oneLine(String((error as Error)?.message ?? error))}`);
      return;
    }
    const promptId = record.messageId ?? record.id;
    // Run again after the process died mid-run: that run may have logged it already.
    const logged = item.replay !== undefined && actor.log?.logged(promptId) === true;
    actor.running = true;
    counts.runs++;
    let ended = false;
    try {
      const result = await runner.prompt({
        text: item.ready?.text ?? record.text,
        images: item.ready ? item.ready.images : (record.images as ImageContent[] | undefined),
        messageId: promptId,
        userId: record.userId,
        userName: record.userName,
        ...(logged ? { logged } : {}),
        onEvent: deliver,
      });
      ended = true;
      if (result.stopReason === "aborted" && stopping) {
        const text = "guppy is shutting down: this run was stopped; its progress is saved.";
        // In the log too, as guppy's answer: a client reading the thread's messages sees why
        // its prompt has none.
        logNotice(threadId, record, text);
        notify(threadId, handle, text);
      }
    } catch (error) {
      logger.error(`Run failed on ${threadId}`, { error: String(error) });
    } finally {
      actor.running = false;
      actor.lastActivity = Date.now();
      if (!ended) fail("The run failed inside guppy; see the gateway log.");
      rememberRun(actor, promptId);
      const after = actor.afterRun;
      actor.afterRun = undefined;
      for (const fn of after ?? []) fn();
    }
  }

  function activate(actor: Actor): AgentRunner {
    if (actor.runner) return actor.runner;
    const runner = options.createRunner(actor.threadId);
    actor.runner = runner;
    actor.snapshot = undefined;
    emit({ type: "activated", threadId: actor.threadId });
    return runner;
  }

  /** Syncs messages logged while no agent ran into the context. */
  function backfill(actor: Actor, item: QueuedPrompt): void {
    const { threadId } = actor;
    actor.log ??= logTail(threadId);
    const promptIds = new Set<string>();
    for (const q of [item, ...actor.queue]) promptIds.add(q.record.messageId ?? q.record.id);
    const entries = actor.log.backfill(promptIds);
    if (entries.length > 0) {
      // The runner holds the context in memory: drop it (idle, saved), append, reload.
      actor.runner = undefined;
      store.appendContext(threadId, [backfillMessage(entries)]);
      emit({ type: "backfilled", threadId, count: entries.length });
      logger.info(`Backfilled ${entries.length} message(s) into ${threadId}`);
    }
  }

  const logTail = (threadId: string) => createLogTail(store, threadId, inbox.promptIds(threadId));

  /** The prompt ran: its log lines are kept out of backfill (the cursor moves on `saveCursor`). */
  function rememberRun(actor: Actor, promptId: string) {
    try {
      actor.log ??= logTail(actor.threadId);
      actor.log.afterRun(promptId);
    } catch (error) {
      logger.warn(`Could not read the log cursor or inbox of ${actor.threadId}`, {
        error: String(error),
      });
    }
  }

  /**
   * Before an inactive thread's run: its files are created (when new) and opened off the event
   * loop while the run waits for a slot. A failure is logged; the run's own writes report it.
   */
  async function openFiles(threadId: string): Promise<void> {
    try {
      await store.openFiles(threadId);
    } catch (error) {
      logger.warn(`Could not open the files of ${threadId}`, { error: String(error) });
    }
  }

  /**
   * Writes the thread's log cursor past its runs' lines; false when that failed. With no log tail
   * (no prompt of it ran since its actor was made: after a restart, or for a command alone), one
   * is made when the inbox holds ids of the thread: after a killed process the saved cursor may
   * be behind the log lines of prompts answered before, which the inbox keeps out of the
   * backfill only until the thread is cleared. The cursor moves past those lines alone (not past
   * a message another sender logged after them), and is not written when it does not move; one
   * that stands at the log's end already (a clean shutdown saved it) costs a stat and its read.
   */
  function saveCursor(threadId: string, log: LogTail | undefined): boolean {
    try {
      if (log) log.save();
      else if (inbox.promptIds(threadId).length > 0 && !cursorAtEnd(threadId)) {
        logTail(threadId).save();
      }
      return true;
    } catch (error) {
      logger.warn(`Could not save the log cursor of ${threadId}`, { error: String(error) });
      return false;
    }
  }

  /** Whether the thread's saved log cursor stands at the end of its log.jsonl, or it has none. */
  function cursorAtEnd(threadId: string): boolean {
    const size = statSync(store.logFile(threadId), { throwIfNoEntry: false })?.size ?? 0;
    return size === 0 || readCursor(store, threadId).offset === size;
  }

  /**
   * The threads the journal held answered prompts or commands of at `start`, and nothing pending
   * (`inbox.uncleared()`), an idle timeout later: one with an actor now is its actor's to clear
   * when it goes idle; the others, which no message came to, are cleared as an idle actor would
   * be — their cursor saved first (no runner loaded, no status written) — or their `ran` lines
   * would be rewritten into the journal at every start and compaction for good.
   */
  function clearUnused(threadIds: readonly string[]): void {
    for (const threadId of threadIds) {
      if (stopping) return;
      const key = keyOf(threadId);
      if (key === undefined || actors.has(key)) continue;
      if (saveCursor(threadId, undefined)) inbox.clear(threadId);
      store.closeFiles(threadId);
    }
  }

  /** Writes a notice that takes the place of a prompt's answer to the thread's log, as guppy's. */
  function logNotice(threadId: string, record: AcceptedRecord, text: string): LogEntry {
    const entry: LogEntry = {
      date: new Date().toISOString(),
      messageId: `notice-${record.id}`,
      userId: "guppy",
      userName: "guppy",
      text,
      isBot: true,
    };
    try {
      store.appendLog(threadId, entry);
    } catch (error) {
      logger.error(`Could not write the log of ${threadId}`, { error: String(error) });
    }
    return entry;
  }

  function reportInterrupted(actor: Actor, item: QueuedPrompt, replay: PendingPrompt) {
    const { threadId } = actor;
    const { record } = item;
    const excerpt = record.text.length > 80 ? `${record.text.slice(0, 79)}…` : record.text;
    const done = replay.tools.map((t) => `${t.name} ${t.args}`).join("; ");
    const text = `guppy stopped while working on your message "${excerpt}" (received ${record.at}), so that run was interrupted. It had already run: ${done}. It was not run again, to avoid repeating those actions; send it again if you want it finished.`;
    const notice = logNotice(threadId, record, text);
    // The interrupted prompt's log line is answered by the notice: not something to backfill.
    rememberRun(actor, record.messageId ?? record.id);
    // The context learns of both (the killed run saved nothing of its last turn there). The
    // runner holds the context in memory: dropped (no run is active), appended to, reloaded.
    try {
      actor.runner = undefined;
      store.appendContext(threadId, [
        interruptedRunMessage(
          {
            date: record.at,
            messageId: record.messageId ?? record.id,
            userId: record.userId ?? "",
            userName: record.userName ?? record.userId ?? "user",
            text: record.text,
            isBot: false,
          },
          notice,
        ),
      ]);
    } catch (error) {
      logger.error(`Could not save the context of ${threadId}`, { error: String(error) });
    }
    inbox.done(threadId, record.id, "interrupted-reported");
    counts.reported++;
    emit({ type: "replayed", threadId, inboxId: record.id, action: "reported" });
    const handle = item.thread ?? linkHandle(threadId);
    if (handle?.onEvent) {
      try {
        handle.onEvent({ type: "run_end", text, stopReason: "aborted" });
      } catch {
        // The notice below still reaches the channel.
      }
    }
    notify(threadId, handle, text);
    logger.warn(`Reported an interrupted run on ${threadId} instead of re-running it`, {
      inboxId: record.id,
    });
  }

  /** Runs `fn` now if no run is active, else right as the current run ends (before the next starts). */
  const whenNotRunning = <T>(actor: Actor, fn: () => T) =>
    new Promise<T>((resolve, reject) => {
      const run = () => {
        try {
          resolve(fn());
        } catch (error) {
          reject(error);
        }
      };
      if (!actor.running) run();
      else {
        actor.afterRun ??= [];
        actor.afterRun.push(run);
      }
    });

  function statusOf(threadId: string): ThreadStatus {
    const key = keyOf(threadId);
    const actor = key === undefined ? undefined : actors.get(key);
    const runner = actor?.runner;
    // No agent loaded and no figures of this process: what the thread saved last time.
    const saved = key === undefined || runner || actor?.snapshot ? undefined : savedStatus(key);
    const snap = runner ? threadFigures(runner.stats()) : (actor?.snapshot ?? saved);
    const lastActivity = actor ? new Date(actor.lastActivity).toISOString() : saved?.lastActivity;
    const queued = actor ? waitingPrompts(actor) : 0;
    // "running" once the run has begun, as the shutdown sees it (a prompt that has its slot but
    // not its files yet is not run by a shutdown that comes meanwhile: it waits for the restart).
    const waiting = queued > 0 || actor?.current !== undefined || actor?.compacting !== undefined;
    return {
      threadId: actor?.threadId ?? threadId,
      state: actor?.running ? "running" : waiting ? "waiting" : runner ? "idle" : "inactive",
      queued,
      ...(lastActivity ? { lastActivity } : {}),
      // provider/model-id either way, as configured: a loaded thread gave the bare id.
      model: runner ? `${runner.model.provider}/${runner.model.id}` : (options.modelName ?? ""),
      messages: snap?.messages ?? 0,
      contextTokens: snap?.contextTokens ?? 0,
      contextWindow: snap?.contextWindow ?? options.contextWindow ?? 0,
      compactions: snap?.compactions ?? 0,
      ...(snap?.compactionFallbacks ? { compactionFallbacks: snap.compactionFallbacks } : {}),
      cost: snap?.cost ?? 0,
      ...(snap?.lastUsage ? { lastUsage: snap.lastUsage } : {}),
    };
  }

  const orchestrator: RuntimeOrchestrator = {
    send(spelling: string, message: ActorMessage): SendResult {
      try {
        if (stopping) {
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
        if (isDuplicate(actor, checked)) {
          if (fresh) forget(actor);
          return { status: "duplicate" };
        }
        // A channel's prompt (it brings a handle) names the thread as that channel does. An actor
        // first addressed otherwise (by the API, after a restart) takes that spelling when nothing
        // of it runs or waits: deactivated first (cursor saved, inbox cleared and files closed
        // under the old spelling, runner dropped), so its next runner and `upload` tool use it.
        if (
          message.type === "prompt" &&
          message.thread &&
          spelling !== actor.threadId &&
          !occupied(actor)
        ) {
          touch(actor);
          deactivate(actor);
          actor.threadId = spelling;
        }
        const { threadId } = actor;
        if (message.type === "prompt") {
          if (message.thread) actor.handle = message.thread;
          const queued = waitingPrompts(actor);
          if (queued >= options.queueDepth) {
            counts.busy++;
            logger.warn(`Thread ${threadId} is busy: a prompt was answered "busy"`, {
              queued,
              busyTotal: counts.busy,
            });
            emit({ type: "busy", threadId, queued });
            notify(threadId, message.thread, busyText(queued));
            return { status: "busy", queued };
          }
          let accepted: { record: AcceptedRecord; synced?: Promise<void> };
          try {
            accepted = inbox.accept(
              threadId,
              {
                text: message.text,
                ...(message.images ? { images: message.images } : {}),
                ...(message.messageId ? { messageId: message.messageId } : {}),
                ...(message.userId ? { userId: message.userId } : {}),
                ...(message.userName ? { userName: message.userName } : {}),
              },
              message.deferSync === true,
            );
          } catch (error) {
            logger.error(`Could not save a prompt for ${threadId}`, { error: String(error) });
            return { status: "refused", reason: `could not save the message (${String(error)})` };
          }
          const { record, synced } = accepted;
          synced?.catch((error: unknown) =>
            logger.error(`Could not save a prompt of ${threadId} to disk`, {
              error: String(error),
            }),
          );
          counts.accepted++;
          if (message.messageId !== undefined) actor.recent?.add(message.messageId);
          touch(actor);
          actor.queue.push({
            record,
            thread: message.thread,
            ...(message.content ? { content: message.content } : {}),
          });
          const position = actor.queue.length - 1 + (actor.current ? 1 : 0);
          emit({ type: "queued", threadId, inboxId: record.id, position });
          startDrain(actor);
          return synced
            ? { status: "queued", inboxId: record.id, position, synced }
            : { status: "queued", inboxId: record.id, position };
        }
        if (message.type === "steer") {
          const delivered = actor.running && actor.runner?.steer(message.text) === true;
          remember(actor, message.messageId, fresh);
          emit({ type: "steered", threadId, delivered });
          if (delivered) return { status: "delivered" };
          notify(
            threadId,
            message.thread,
            "Nothing is running in this thread, so there is nothing to steer.",
          );
          return { status: "dropped", reason: "nothing is running" };
        }
        // A /compact under way is stopped too (its summary request is cancelled).
        const delivered =
          (actor.running || actor.compacting !== undefined) && actor.runner !== undefined;
        if (delivered) actor.runner?.abort();
        remember(actor, message.messageId, fresh);
        emit({ type: "aborted", threadId, delivered });
        if (delivered) return { status: "delivered" };
        return { status: "dropped", reason: "nothing is running" };
      } catch (error) {
        return { status: "refused", reason: oneLine(String((error as Error)?.message ?? error)) };
      }
    },

    async sendToChannel(adapterId, channelId, text) {
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

    registerChannel(link) {
      links.set(link.adapterId, link);
    },

    async reset(threadId, messageId): Promise<ResetResult> {
      const held = options.heldElsewhere?.(threadId);
      if (held !== undefined) throw new ThreadHeldError(held);
      const fresh = !actors.has(canonicalThreadId(threadId));
      const actor = actorFor(threadId);
      if (isDuplicate(actor, messageId)) {
        if (fresh) forget(actor);
        return { status: "duplicate" };
      }
      if (messageId !== undefined) actor.recent?.add(messageId);
      // After a /compact under way (its runner is busy until then), as after a running turn.
      while (actor.compacting) await actor.compacting;
      return whenNotRunning(actor, (): ResetResult => {
        const archived = actor.runner ? actor.runner.reset() : store.archiveContext(actor.threadId);
        // On disk with the archive (the same stretch of code): a restart knows this /new.
        if (messageId !== undefined) inbox.handled(actor.threadId, messageId);
        // The saved figures are the old context's: a fresh thread's replace them.
        actor.snapshot = actor.runner
          ? threadFigures(actor.runner.stats())
          : {
              messages: 0,
              contextTokens: 0,
              contextWindow: options.contextWindow ?? 0,
              cost: 0,
              compactions: 0,
            };
        saveStatus(actor);
        idleIfQuiet(actor);
        return archived === undefined ? { status: "reset" } : { status: "reset", archived };
      });
    },

    async compact(threadId, messageId): Promise<CompactResult> {
      const held = options.heldElsewhere?.(threadId);
      if (held !== undefined) throw new ThreadHeldError(held);
      const fresh = !actors.has(canonicalThreadId(threadId));
      const actor = actorFor(threadId);
      if (isDuplicate(actor, messageId)) {
        if (fresh) forget(actor);
        return { status: "duplicate" };
      }
      if (messageId !== undefined) actor.recent?.add(messageId);
      let compacted = () => {};
      const runner = await whenNotRunning(actor, () => {
        if (actor.compacting) throw new Error("A compaction is already running in this thread.");
        const loaded = activate(actor);
        // On disk as the compaction starts (after the run it waited for): a restart knows it.
        if (messageId !== undefined) inbox.handled(actor.threadId, messageId);
        // Set at once (at the end of the run it waited for), before the next prompt can start.
        actor.compacting = new Promise<void>((resolve) => {
          compacted = resolve;
        });
        // Not deactivated while it compacts: the timeout starts again when it is done.
        if (actor.idleTimer) clearTimeout(actor.idleTimer);
        actor.idleTimer = undefined;
        return loaded;
      });
      try {
        return { status: "compacted", report: describeCompaction(await runner.compact()) };
      } finally {
        actor.compacting = undefined;
        compacted();
        // A runner loaded for the compaction alone goes at the idle timeout like any other.
        idleIfQuiet(actor);
      }
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
      if (started) return;
      started = true;
      // Every unanswered prompt, in the order accepted across threads (the prompts sent before
      // this call among them): each actor's queue is its part of that order, and the actors
      // start in the order of their oldest unanswered prompt — not of their oldest line, which
      // may be a prompt answered at the shutdown (a run aborted when the grace ran out). An actor
      // asks for the slot of its next prompt only once the previous one ran: the rank (the
      // prompt's place in that order) has the limiter serve them in that order all the same, and
      // an actor whose next prompt comes first keeps its slot for it (`keepSlot`).
      const inMemory = new Map<string, QueuedPrompt>();
      for (const actor of actors.values()) {
        for (const q of actor.queue) inMemory.set(q.record.id, q);
      }
      const replaying = new Map<Actor, QueuedPrompt[]>();
      for (const [rank, p] of inbox.scan().entries()) {
        const { threadId } = p.record;
        // A chat runs the thread now: its prompts wait in the journal for a later start.
        if (options.heldElsewhere?.(threadId) !== undefined) continue;
        const actor = actorFor(threadId);
        let queue = replaying.get(actor);
        if (!queue) {
          queue = [];
          replaying.set(actor, queue);
        }
        let item = inMemory.get(p.record.id);
        if (!item) {
          counts.replayed++;
          emit({
            type: "replayed",
            threadId,
            inboxId: p.record.id,
            action: p.tools.length > 0 ? "reported" : "rerun",
          });
          item = { record: p.record, replay: p };
        }
        item.rank = rank;
        queue.push(item);
      }
      for (const [actor, queue] of replaying) {
        const replayed = queue.filter((q) => q.replay !== undefined).length;
        actor.queue = queue;
        if (replayed > 0) {
          logger.info(`Replaying ${replayed} unanswered prompt(s) of ${actor.threadId}`);
        }
      }
      for (const actor of replaying.keys()) startDrain(actor);
      for (const actor of actors.values()) {
        if (actor.queue.length > 0) startDrain(actor);
      }
      // A thread with ids in the journal (answered prompts, commands) and nothing to replay is
      // cleared an idle timeout from now unless a message comes to it (its actor clears it then).
      const unused = inbox.uncleared();
      if (unused.length > 0) {
        unusedTimer = setTimeout(() => clearUnused(unused), options.idleTimeoutMs);
        unusedTimer.unref?.();
      }
    },

    async shutdown(graceMs) {
      if (stopping) return;
      stopping = true;
      stopNow();
      clearTimeout(unusedTimer);
      for (const actor of actors.values()) {
        if (actor.idleTimer) clearTimeout(actor.idleTimer);
        actor.idleTimer = undefined;
        // The queued prompts, and one not started yet (waiting for its attachments or a slot).
        const waiting = actor.current && !actor.running ? [actor.current] : [];
        for (const item of [...waiting, ...actor.queue]) {
          notify(actor.threadId, item.thread, RESTART_NOTICE);
        }
      }
      const drains = () =>
        Promise.all([...actors.values()].map((a) => a.drain ?? Promise.resolve()));
      let timer: NodeJS.Timeout | undefined;
      const graceOver = new Promise<"timeout">((resolve) => {
        timer = setTimeout(() => resolve("timeout"), graceMs);
      });
      const outcome = await Promise.race([drains().then(() => "drained" as const), graceOver]);
      clearTimeout(timer);
      if (outcome === "timeout") {
        for (const actor of actors.values()) {
          // A /compact under way holds the prompts queued behind it: it is stopped too.
          if (actor.running || actor.compacting) {
            logger.warn(`Aborting the run of ${actor.threadId} (shutdown grace is over)`);
            actor.runner?.abort();
          }
        }
        await drains();
      }
      for (const actor of actors.values()) {
        if (actor.log) saveCursor(actor.threadId, actor.log);
        if (actor.runner) {
          actor.snapshot = threadFigures(actor.runner.stats());
          saveStatus(actor);
        }
      }
      inbox.close();
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
        ...counts,
        activeActors: actors.size,
        loadedRunners: loaded,
        runningNow: running,
        waitingForSlot: limiter.waiting,
      };
    },
  };
  return orchestrator;
}
