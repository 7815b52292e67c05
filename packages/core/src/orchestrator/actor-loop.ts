import type { ImageContent } from "@mariozechner/pi-ai";
import type { AcceptedRecord, InboxOutcome, PendingPrompt } from "../inbox/inbox-record.js";
import { oneLine } from "../runner/message-text.js";
import type { AgentRunner } from "../runner/types.js";
import type { LogEntry } from "../store/thread-layout.js";
import type { RunnerEvent } from "../types.js";
import type { ActorHost, ActorState, QueuedPrompt } from "./actor-types.js";
import { backfillMessage, interruptedRunMessage } from "./backfill.js";
import { createLogTail, type LogTail } from "./log-tail.js";

/**
 * Runs the actor's queue one prompt at a time until it is empty or guppy stops. A prompt waits
 * in its place for its attachments (holding no slot), then for a concurrency slot, then runs.
 */
export async function drainQueue(host: ActorHost, actor: ActorState): Promise<void> {
  const { limiter } = host;
  /** The previous prompt's slot, kept for the next one (see `keepSlot`). */
  let kept = false;
  while (actor.queue.length > 0 && !host.stopping) {
    // The runner does one thing at a time: a prompt sent while /compact runs waits for it.
    if (actor.compacting) {
      if (kept) limiter.release();
      kept = false;
      await actor.compacting;
      continue;
    }
    const item = actor.queue.shift() as QueuedPrompt;
    actor.current = item;
    if (item.content) {
      actor.currentWaits = true;
      const ready = await Promise.race([item.content.catch(() => undefined), host.stopped]);
      actor.currentWaits = false;
      if (host.stopping) {
        // Not started: it stays accepted in the inbox (with its saved text) for the next start.
        actor.current = undefined;
        actor.queue.unshift(item);
        break;
      }
      item.content = undefined;
      if (ready) item.ready = ready;
    }
    // The place in the FIFO is taken at once; a new thread's files are opened meanwhile.
    const slot = kept || limiter.tryAcquire() ? undefined : waitForSlot(host, actor, item);
    kept = false;
    if (actor.runner) await slot;
    else {
      const files = openFiles(host, actor.threadId);
      await (slot ? Promise.all([slot, files]) : files);
    }
    try {
      if (host.stopping) {
        // Not started: it stays accepted in the inbox and runs after the next start.
        actor.queue.unshift(item);
        break;
      }
      if (actor.compacting) {
        // Began while this one waited for its slot: back to the front, to wait above.
        actor.queue.unshift(item);
        continue;
      }
      await runPrompt(host, actor, item);
    } catch (error) {
      host.logger.error(`Actor ${actor.threadId} failed`, { error: String(error) });
    } finally {
      actor.current = undefined;
      kept = keepSlot(host, actor);
      if (!kept) limiter.release();
    }
  }
  if (kept) limiter.release();
}

/**
 * Whether the slot goes straight on to the next prompt: a replayed one (ranked, nothing to wait
 * for) that the limiter would serve before every waiter. Released, the slot would go to a later
 * prompt first and replayed prompts would not run in the order accepted.
 */
function keepSlot(host: ActorHost, actor: ActorState): boolean {
  const next = actor.queue[0];
  return (
    next?.rank !== undefined &&
    next.content === undefined &&
    !host.stopping &&
    actor.compacting === undefined &&
    host.limiter.keepFor(next.rank)
  );
}

/** A slot for the current prompt when none was free: it counts as waiting until then. */
function waitForSlot(host: ActorHost, actor: ActorState, item: QueuedPrompt): Promise<void> {
  actor.currentWaits = true;
  return host.limiter.acquire(item.rank).then(() => {
    actor.currentWaits = false;
  });
}

/** Before an inactive thread's run: its files are created and opened off the event loop. */
async function openFiles(host: ActorHost, threadId: string): Promise<void> {
  try {
    await host.store.openFiles(threadId);
  } catch (error) {
    host.logger.warn(`Could not open the files of ${threadId}`, { error: String(error) });
  }
}

/** One prompt's run: its events go to the inbox, its channel and the listeners. */
async function runPrompt(host: ActorHost, actor: ActorState, item: QueuedPrompt): Promise<void> {
  const { threadId } = actor;
  const { inbox, logger } = host;
  const { record } = item;
  if (item.replay && item.replay.tools.length > 0) {
    reportInterrupted(host, actor, item, item.replay);
    return;
  }
  const handle = item.thread ?? actor.handle ?? host.linkHandle(threadId);
  const deliver = (event: RunnerEvent) => {
    if (event.type === "tool_call") inbox.tool(threadId, record.id, event.name, event.args);
    if (event.type === "run_end") markDone(host, threadId, record.id, event.stopReason);
    if (handle?.onEvent) {
      try {
        handle.onEvent(event);
      } catch (error) {
        logger.warn(`A channel's event handler threw on ${threadId}`, { error: String(error) });
      }
    }
    host.emit({ type: "runner", threadId, inboxId: record.id, event });
  };
  const fail = (message: string) => {
    deliver({ type: "error", kind: "internal", message });
    deliver({ type: "run_end", text: "", stopReason: "error", errorMessage: message });
  };

  // Its accepted line goes to the journal before the run writes anything. A prompt that could
  // not be made durable (a full disk) does not run: it would be lost to a restart, and its
  // sender was told it failed (HTTP 507) or is told now.
  if (!inbox.written(record)) {
    inbox.unsaved(record);
    logger.error(
      `A prompt of ${threadId} could not be saved, so it was not run (is the disk full?)`,
    );
    host.notify(
      threadId,
      handle,
      "guppy could not save your message (its disk may be full), so it was not run; send it again once there is room.",
    );
    return;
  }
  let runner: AgentRunner;
  try {
    backfill(host, actor, item);
    runner = actor.activate();
  } catch (error) {
    logger.error(`Could not start the agent of ${threadId}`, { error: String(error) });
    fail(`Could not start the agent: ${oneLine(String((error as Error)?.message ?? error))}`);
    return;
  }
  const promptId = record.messageId ?? record.id;
  // Run again after the process died mid-run: that run may have logged it already.
  const logged = item.replay !== undefined && actor.log?.logged(promptId) === true;
  actor.running = true;
  host.counts.runs++;
  let ended = false;
  try {
    const result = await runner.prompt({
      text: item.ready?.text ?? record.text,
      images: item.ready ? item.ready.images : (record.images as ImageContent[] | undefined),
      messageId: promptId,
      userId: record.userId,
      userName: record.userName,
      role: record.role ?? "owner",
      ...(record.origin ? { origin: record.origin } : {}),
      ...(logged ? { logged } : {}),
      onEvent: deliver,
    });
    ended = true;
    if (result.stopReason === "aborted" && host.stopping) {
      const text = "guppy is shutting down: this run was stopped; its progress is saved.";
      // In the log too, so a client reading the thread sees why its prompt has no answer.
      logNotice(host, threadId, record, text);
      host.notify(threadId, handle, text);
    }
  } catch (error) {
    logger.error(`Run failed on ${threadId}`, { error: String(error) });
  } finally {
    actor.running = false;
    actor.lastActivity = Date.now();
    if (!ended) fail("The run failed inside guppy; see the gateway log.");
    rememberRun(host, actor, promptId);
    const after = actor.afterRun;
    actor.afterRun = undefined;
    for (const fn of after ?? []) fn();
  }
}

/**
 * Marks a prompt done in the inbox once what its run wrote (answer, context) is on disk. On a
 * full disk the store keeps those lines in memory and writes them when there is room: until
 * then the prompt stays pending, so a restart meanwhile reports or replays it instead of
 * forgetting an answer that was never saved.
 */
function markDone(host: ActorHost, threadId: string, id: string, outcome: InboxOutcome): void {
  const saved = host.store.whenSaved(threadId);
  if (saved === undefined) {
    host.inbox.done(threadId, id, outcome);
    return;
  }
  host.logger.error(`answer for ${threadId} not saved (disk full?); kept pending, retrying`);
  void saved.then(() => {
    host.inbox.done(threadId, id, outcome);
    host.logger.info(`answer for ${threadId} saved`);
  });
}

/** Syncs messages logged while no agent ran into the context. */
function backfill(host: ActorHost, actor: ActorState, item: QueuedPrompt): void {
  const { threadId } = actor;
  actor.log ??= logTail(host, threadId);
  const promptIds = new Set<string>();
  for (const q of [item, ...actor.queue]) promptIds.add(q.record.messageId ?? q.record.id);
  const entries = actor.log.backfill(promptIds, host.backfillLimit);
  if (entries.length > 0) {
    // The runner holds the context in memory: drop it (idle, saved), append, reload.
    actor.runner = undefined;
    host.store.appendContext(threadId, [backfillMessage(entries, host.timezone)]);
    host.emit({ type: "backfilled", threadId, count: entries.length });
    host.logger.info(`Backfilled ${entries.length} message(s) into ${threadId}`);
  }
}

const logTail = (host: ActorHost, threadId: string): LogTail =>
  createLogTail(host.store, threadId, host.inbox.promptIds(threadId));

/** The prompt ran: its log lines are kept out of backfill (the cursor moves at `save`). */
function rememberRun(host: ActorHost, actor: ActorState, promptId: string): void {
  try {
    actor.log ??= logTail(host, actor.threadId);
    actor.log.afterRun(promptId);
  } catch (error) {
    host.logger.warn(`Could not read the log cursor or inbox of ${actor.threadId}`, {
      error: String(error),
    });
  }
}

/** Writes a notice that takes the place of a prompt's answer to the thread's log, as guppy's. */
function logNotice(
  host: ActorHost,
  threadId: string,
  record: AcceptedRecord,
  text: string,
): LogEntry {
  const entry: LogEntry = {
    date: new Date().toISOString(),
    messageId: `notice-${record.id}`,
    userId: "guppy",
    userName: "guppy",
    text,
    isBot: true,
  };
  try {
    host.store.appendLog(threadId, entry);
  } catch (error) {
    host.logger.error(`Could not write the log of ${threadId}`, { error: String(error) });
  }
  return entry;
}

/** A replayed prompt whose run had called tools: reported, not run again (no repeated actions). */
function reportInterrupted(
  host: ActorHost,
  actor: ActorState,
  item: QueuedPrompt,
  replay: PendingPrompt,
): void {
  const { threadId } = actor;
  const { record } = item;
  const excerpt = record.text.length > 80 ? `${record.text.slice(0, 79)}…` : record.text;
  const done = replay.tools.map((t) => `${t.name} ${t.args}`).join("; ");
  const text = `guppy stopped while working on your message "${excerpt}" (received ${record.at}), so that run was interrupted. It had already run: ${done}. It was not run again, to avoid repeating those actions; send it again if you want it finished.`;
  const notice = logNotice(host, threadId, record, text);
  // The prompt's log line is answered by the notice: not something to backfill.
  rememberRun(host, actor, record.messageId ?? record.id);
  // The context learns of both; the runner holds it in memory: dropped, appended to, reloaded.
  try {
    actor.runner = undefined;
    host.store.appendContext(threadId, [
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
        host.timezone,
      ),
    ]);
  } catch (error) {
    host.logger.error(`Could not save the context of ${threadId}`, { error: String(error) });
  }
  markDone(host, threadId, record.id, "interrupted-reported");
  host.counts.reported++;
  host.emit({ type: "replayed", threadId, inboxId: record.id, action: "reported" });
  const handle = item.thread ?? host.linkHandle(threadId);
  if (handle?.onEvent) {
    try {
      handle.onEvent({ type: "run_end", text, stopReason: "aborted" });
    } catch {
      // The notice below still reaches the channel.
    }
  }
  host.notify(threadId, handle, text);
  host.logger.warn(`Reported an interrupted run on ${threadId} instead of re-running it`, {
    inboxId: record.id,
  });
}
