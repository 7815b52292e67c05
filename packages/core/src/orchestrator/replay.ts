import type { ActorHost, QueuedPrompt } from "./actor-types.js";
import { saveCursor } from "./log-tail.js";
import type { ThreadActor } from "./thread-actor.js";
import { keyOf } from "./thread-status.js";

/**
 * At start: every unanswered prompt in the inbox, in the order accepted across threads (those
 * sent before `start` among them), becomes its actor's queue, and the actors start in the order
 * of their oldest unanswered prompt. A prompt's rank (its place in that order) has the limiter
 * serve them in that order although each actor asks for its next slot only once the previous
 * prompt ran.
 */
export function replayInbox(
  host: ActorHost,
  actors: ReadonlyMap<string, ThreadActor>,
  actorFor: (threadId: string) => ThreadActor,
  heldElsewhere?: (threadId: string) => string | undefined,
): void {
  const inMemory = new Map<string, QueuedPrompt>();
  for (const actor of actors.values()) {
    for (const q of actor.queue) inMemory.set(q.record.id, q);
  }
  const replaying = new Map<ThreadActor, QueuedPrompt[]>();
  for (const [rank, p] of host.inbox.scan().entries()) {
    const { threadId } = p.record;
    // A chat runs the thread now: its prompts wait in the journal for a later start.
    if (heldElsewhere?.(threadId) !== undefined) continue;
    const actor = actorFor(threadId);
    let queue = replaying.get(actor);
    if (!queue) {
      queue = [];
      replaying.set(actor, queue);
    }
    let item = inMemory.get(p.record.id);
    if (!item) {
      host.counts.replayed++;
      host.emit({
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
      host.logger.info(`Replaying ${replayed} unanswered prompt(s) of ${actor.threadId}`);
    }
  }
  for (const actor of replaying.keys()) actor.startDrain();
  for (const actor of actors.values()) {
    if (actor.queue.length > 0) actor.startDrain();
  }
}

/**
 * The threads the inbox holds ids of (answered prompts, commands) and nothing to replay are
 * cleared an idle timeout after start unless a message comes to them (their actor clears them
 * then): else their `ran` lines would be rewritten into the journal at every start for good.
 */
export function clearUnusedLater(
  host: ActorHost,
  actors: ReadonlyMap<string, ThreadActor>,
): NodeJS.Timeout | undefined {
  const unused = host.inbox.uncleared();
  if (unused.length === 0) return undefined;
  const timer = setTimeout(() => clearUnused(host, actors, unused), host.idleTimeoutMs);
  timer.unref?.();
  return timer;
}

/** Clears the threads as an idle actor would: cursor saved first (no runner, no status). */
function clearUnused(
  host: ActorHost,
  actors: ReadonlyMap<string, ThreadActor>,
  threadIds: readonly string[],
): void {
  for (const threadId of threadIds) {
    if (host.stopping) return;
    const key = keyOf(threadId);
    if (key === undefined || actors.has(key)) continue;
    if (saveCursor(host.store, host.inbox, threadId, undefined, host.logger)) {
      host.inbox.clear(threadId);
    }
    host.store.closeFiles(threadId);
  }
}
