import { describeCompaction } from "../context/describe-compaction.js";
import type { AcceptedRecord } from "../inbox/inbox-record.js";
import type { AgentRunner } from "../runner/types.js";
import { canonicalThreadId } from "../store/thread-layout.js";
import { threadFigures } from "../store/thread-status-file.js";
import type {
  ActorMessage,
  CompactResult,
  ResetResult,
  SendResult,
  ThreadFigures,
  ThreadHandle,
} from "../types.js";
import { drainQueue } from "./actor-loop.js";
import type { ActorHost, ActorState, QueuedPrompt } from "./actor-types.js";
import { type LogTail, saveCursor } from "./log-tail.js";
import { loadRecentMessageIds, type RecentMessageIds } from "./recent-message-ids.js";

const busyText = (queued: number) =>
  `This thread already has ${queued} ${queued === 1 ? "message" : "messages"} waiting for an answer, so this one was not queued; please send it again in a moment.`;

/**
 * One thread's actor, kept while the thread is active: its queue and the loop that drains it one
 * run at a time, its runner, idle timer, and the channel message ids it accepted lately. `/new`
 * and `/compact` wait for the current run; steer and abort bypass the queue.
 */
export class ThreadActor implements ActorState {
  threadId: string;
  queue: QueuedPrompt[] = [];
  current: QueuedPrompt | undefined;
  currentWaits = false;
  runner: AgentRunner | undefined;
  running = false;
  lastActivity = Date.now();
  handle: ThreadHandle | undefined;
  log: LogTail | undefined;
  compacting: Promise<void> | undefined;
  afterRun: Array<() => void> | undefined;
  /** The drain loop, while one runs. */
  draining: Promise<void> | undefined;
  /** The figures of the runner it dropped last (saved to status.json). */
  snapshot: ThreadFigures | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private recent: RecentMessageIds | undefined;
  private readonly host: ActorHost;

  constructor(host: ActorHost, threadId: string) {
    this.host = host;
    this.threadId = threadId;
  }

  /** Prompts accepted and not running yet: what the queue depth and `status().queued` count. */
  waiting(): number {
    return this.queue.length + (this.currentWaits ? 1 : 0);
  }

  /** Something runs or waits: such an actor is not deactivated, renamed or timed out. */
  occupied(): boolean {
    return (
      this.running ||
      this.current !== undefined ||
      this.queue.length > 0 ||
      this.compacting !== undefined
    );
  }

  // ------------------------------------------------------------ messages

  /** A message delivered again: dropped without a word to anyone but the debug log. */
  isDuplicate(messageId: string | undefined): boolean {
    if (messageId === undefined || !this.recentIds().has(messageId)) return false;
    this.host.logger.debug(`Dropped a message ${this.threadId} has already accepted`, {
      messageId,
    });
    return true;
  }

  /**
   * Takes the channel's spelling of the thread id when nothing runs or waits: deactivated first
   * (cursor saved, inbox cleared and files closed under the old one), so its next runner uses it.
   */
  rename(spelling: string): void {
    this.touch();
    this.deactivate();
    this.threadId = spelling;
  }

  /** Accepts a prompt into the durable inbox and the queue, or answers "busy". */
  accept(message: Extract<ActorMessage, { type: "prompt" }>): SendResult {
    const { host, threadId } = this;
    if (message.thread) this.handle = message.thread;
    const queued = this.waiting();
    if (queued >= host.queueDepth) {
      host.counts.busy++;
      host.logger.warn(`Thread ${threadId} is busy: a prompt was answered "busy"`, {
        queued,
        busyTotal: host.counts.busy,
      });
      host.emit({ type: "busy", threadId, queued });
      host.notify(threadId, message.thread, busyText(queued), true);
      return { status: "busy", queued };
    }
    let accepted: { record: AcceptedRecord; synced?: Promise<void> };
    try {
      accepted = host.inbox.accept(
        threadId,
        {
          text: message.text,
          ...(message.images ? { images: message.images } : {}),
          ...(message.messageId ? { messageId: message.messageId } : {}),
          ...(message.userId ? { userId: message.userId } : {}),
          ...(message.userName ? { userName: message.userName } : {}),
          ...(message.role === "guest" ? { role: "guest" as const } : {}),
          ...(message.origin ? { origin: message.origin } : {}),
        },
        message.deferSync === true,
      );
    } catch (error) {
      host.logger.error(`Could not save a prompt for ${threadId}`, { error: String(error) });
      return {
        status: "refused",
        reason: `could not save the message (${String(error)})`,
        unsaved: true,
      };
    }
    const { record, synced } = accepted;
    synced?.catch((error: unknown) =>
      host.logger.error(`Could not save a prompt of ${threadId} to disk`, {
        error: String(error),
      }),
    );
    host.counts.accepted++;
    if (message.messageId !== undefined) this.recent?.add(message.messageId);
    this.touch();
    this.queue.push({
      record,
      thread: message.thread,
      ...(message.content ? { content: message.content } : {}),
    });
    const position = this.queue.length - 1 + (this.current ? 1 : 0);
    host.emit({ type: "queued", threadId, inboxId: record.id, position });
    this.startDrain();
    return synced
      ? { status: "queued", inboxId: record.id, position, synced }
      : { status: "queued", inboxId: record.id, position };
  }

  steer(message: Extract<ActorMessage, { type: "steer" }>, fresh: boolean): SendResult {
    const { threadId } = this;
    // A guest's words steering an owner's run would reach the owner's tools.
    if (this.running && message.role === "guest" && this.current?.record.role !== "guest") {
      this.remember(message.messageId, fresh);
      this.host.emit({ type: "steered", threadId, delivered: false });
      this.host.notify(
        threadId,
        message.thread,
        "This run was started by the owner; a guest cannot steer it. Send your message once it ends.",
        true,
      );
      return { status: "dropped", reason: "a guest cannot steer an owner's run" };
    }
    const delivered = this.running && this.runner?.steer(message.text) === true;
    this.remember(message.messageId, fresh);
    this.host.emit({ type: "steered", threadId, delivered });
    if (delivered) return { status: "delivered" };
    this.host.notify(
      threadId,
      message.thread,
      "Nothing is running in this thread, so there is nothing to steer.",
      true,
    );
    return { status: "dropped", reason: "nothing is running" };
  }

  /** Stops the run, or a /compact under way (its summary request is cancelled). */
  abort(messageId: string | undefined, fresh: boolean): SendResult {
    const delivered = (this.running || this.compacting !== undefined) && this.runner !== undefined;
    if (delivered) this.runner?.abort();
    this.remember(messageId, fresh);
    this.host.emit({ type: "aborted", threadId: this.threadId, delivered });
    if (delivered) return { status: "delivered" };
    return { status: "dropped", reason: "nothing is running" };
  }

  /** `/new`, after a /compact or run under way. */
  async reset(messageId: string | undefined, fresh: boolean): Promise<ResetResult> {
    if (this.isDuplicate(messageId)) {
      if (fresh) this.host.forget(this);
      return { status: "duplicate" };
    }
    if (messageId !== undefined) this.recent?.add(messageId);
    while (this.compacting) await this.compacting;
    return this.whenNotRunning((): ResetResult => {
      const { store, inbox } = this.host;
      const archived = this.runner ? this.runner.reset() : store.archiveContext(this.threadId);
      // On disk with the archive: a restart knows this /new.
      if (messageId !== undefined) inbox.handled(this.threadId, messageId);
      // The saved figures are the old context's: a fresh thread's replace them.
      this.snapshot = this.runner
        ? threadFigures(this.runner.stats())
        : {
            messages: 0,
            contextTokens: 0,
            contextWindow: this.host.contextWindow ?? 0,
            cost: 0,
            compactions: 0,
          };
      this.saveStatus();
      this.idleIfQuiet();
      return archived === undefined ? { status: "reset" } : { status: "reset", archived };
    });
  }

  /** `/compact`, after the run under way; prompts sent meanwhile wait for it. */
  async compact(messageId: string | undefined, fresh: boolean): Promise<CompactResult> {
    if (this.isDuplicate(messageId)) {
      if (fresh) this.host.forget(this);
      return { status: "duplicate" };
    }
    if (messageId !== undefined) this.recent?.add(messageId);
    let compacted = () => {};
    const runner = await this.whenNotRunning(() => {
      if (this.compacting) throw new Error("A compaction is already running in this thread.");
      const loaded = this.activate();
      // On disk as the compaction starts: a restart knows it.
      if (messageId !== undefined) this.host.inbox.handled(this.threadId, messageId);
      // Set before the next prompt can start; no idle timeout while it compacts.
      this.compacting = new Promise<void>((resolve) => {
        compacted = resolve;
      });
      this.clearIdle();
      return loaded;
    });
    try {
      return { status: "compacted", report: describeCompaction(await runner.compact()) };
    } finally {
      this.compacting = undefined;
      compacted();
      this.idleIfQuiet();
    }
  }

  // ------------------------------------------------------------ the queue and runner

  startDrain(): void {
    const { host } = this;
    if (!host.started || host.stopping || this.draining) return;
    this.draining = drainQueue(host, this).finally(() => {
      this.draining = undefined;
      this.lastActivity = Date.now();
      if (!host.stopping) {
        if (this.queue.length > 0) this.startDrain();
        else this.scheduleIdle();
      }
    });
  }

  activate(): AgentRunner {
    if (this.runner) return this.runner;
    const runner = this.host.createRunner(this.threadId);
    this.runner = runner;
    this.snapshot = undefined;
    this.host.emit({ type: "activated", threadId: this.threadId });
    return runner;
  }

  /** Runs `fn` now if no run is active, else right as the current run ends (before the next starts). */
  private whenNotRunning<T>(fn: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const run = () => {
        try {
          resolve(fn());
        } catch (error) {
          reject(error);
        }
      };
      if (!this.running) run();
      else {
        this.afterRun ??= [];
        this.afterRun.push(run);
      }
    });
  }

  // ------------------------------------------------------------ idle, dedupe, saving

  touch(): void {
    this.lastActivity = Date.now();
    this.clearIdle();
  }

  clearIdle(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  private scheduleIdle(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.deactivate(true), this.host.idleTimeoutMs);
    this.idleTimer.unref?.();
  }

  /** Starts the idle timeout after a command used outside any run (a run's end starts it otherwise). */
  private idleIfQuiet(): void {
    if (!this.host.stopping && !this.draining && !this.occupied()) this.scheduleIdle();
  }

  /**
   * Drops the runner and saves what it knew. `evict` (the idle timeout): the actor goes too once
   * its figures and log cursor are on disk; its status is then read from status.json.
   */
  deactivate(evict = false): void {
    const { host } = this;
    this.idleTimer = undefined;
    if (this.occupied()) return;
    let statusSaved = true;
    if (this.runner) {
      this.snapshot = threadFigures(this.runner.stats());
      this.runner = undefined;
      statusSaved = this.saveStatus();
      host.emit({ type: "deactivated", threadId: this.threadId });
    }
    this.handle = undefined;
    this.afterRun = undefined;
    this.draining = undefined;
    const saved = saveCursor(host.store, host.inbox, this.threadId, this.log, host.logger);
    this.log = undefined;
    // Every prompt in the inbox is done. (Kept when the cursor could not be saved: its prompt ids
    // keep their log lines out of the next backfill.)
    if (saved) host.inbox.clear(this.threadId);
    host.store.closeFiles(this.threadId);
    if (evict && saved && statusSaved) host.forget(this);
  }

  /** Writes the figures to status.json: the thread's status with no agent loaded. */
  saveStatus(): boolean {
    if (!this.snapshot) return true;
    try {
      this.host.forgetSavedStatus(canonicalThreadId(this.threadId));
      this.host.store.saveStatus(this.threadId, {
        lastActivity: new Date(this.lastActivity).toISOString(),
        ...this.snapshot,
      });
      return true;
    } catch (error) {
      this.host.logger.warn(`Could not save the status of ${this.threadId}`, {
        error: String(error),
      });
      return false;
    }
  }

  /** At shutdown, after the last run: the log cursor and the runner's figures. */
  save(): void {
    const { host } = this;
    if (this.log) saveCursor(host.store, host.inbox, this.threadId, this.log, host.logger);
    if (this.runner) {
      this.snapshot = threadFigures(this.runner.stats());
      this.saveStatus();
    }
  }

  /** The message ids it accepted lately, read when first needed. */
  private recentIds(): RecentMessageIds {
    const { host } = this;
    this.recent ??= loadRecentMessageIds(
      host.store,
      this.threadId,
      host.inbox.promptIds(this.threadId),
      host.logger,
    );
    return this.recent;
  }

  /**
   * A steer or abort acted (or was dropped, nothing running): its id is kept, in memory and as an
   * inbox `ran` line, so the message delivered again neither steers twice nor stops a later run.
   * An actor made for an id-less one alone (`fresh`) goes at once; with an id, at the idle timeout.
   */
  private remember(messageId: string | undefined, fresh: boolean): void {
    if (messageId === undefined) {
      if (fresh && !this.occupied()) this.host.forget(this);
      return;
    }
    this.recent?.add(messageId);
    this.host.inbox.handled(this.threadId, messageId);
    if (!this.idleTimer) this.idleIfQuiet();
  }
}
