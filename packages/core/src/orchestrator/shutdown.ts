import type { ActorHost } from "./actor-types.js";
import type { ThreadActor } from "./thread-actor.js";

/**
 * What the sender of a message kept for the next start is told at a shutdown: a prompt still
 * queued here, or one a channel keeps on disk (Telegram's held updates) when this refuses it.
 */
export const RESTART_NOTICE =
  "guppy is restarting: your message is saved and will be answered when it is back.";

/** How long runs aborted at the end of the grace period may take to end (and be saved). */
export const ABORT_WAIT_MS = 3000;

/**
 * Lets running turns finish for up to `graceMs`, then aborts them (and any /compact, which holds
 * the prompts behind it), saves every actor's cursor and figures and closes the inbox. Prompts not
 * started stay accepted in the inbox for the next start; their senders are told so.
 */
export async function shutdownActors(
  host: ActorHost,
  actors: ReadonlyMap<string, ThreadActor>,
  graceMs: number,
): Promise<void> {
  for (const actor of actors.values()) {
    actor.clearIdle();
    // The queued prompts, and one not started yet (waiting for its attachments or a slot).
    const waiting = actor.current && !actor.running ? [actor.current] : [];
    for (const item of [...waiting, ...actor.queue]) {
      host.notify(actor.threadId, item.thread, RESTART_NOTICE);
    }
  }
  const drains = () =>
    Promise.all([...actors.values()].map((a) => a.draining ?? Promise.resolve()));
  let timer: NodeJS.Timeout | undefined;
  const graceOver = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), graceMs);
  });
  const outcome = await Promise.race([drains().then(() => "drained" as const), graceOver]);
  clearTimeout(timer);
  if (outcome === "timeout") {
    for (const actor of actors.values()) {
      if (actor.running || actor.compacting) {
        host.logger.warn(`Aborting the run of ${actor.threadId} (shutdown grace is over)`);
        actor.runner?.abort();
      }
    }
    // An aborted run ends within a second whatever it waits on (a retry's wait, the provider, a
    // tool); one that still does not is left behind: its prompt has no `done` line, so the next
    // start reports it as interrupted, and the process still exits.
    let abortTimer: NodeJS.Timeout | undefined;
    const abortOver = new Promise<"timeout">((resolve) => {
      abortTimer = setTimeout(() => resolve("timeout"), ABORT_WAIT_MS);
    });
    const ended = await Promise.race([drains().then(() => "drained" as const), abortOver]);
    clearTimeout(abortTimer);
    if (ended === "timeout") {
      for (const actor of actors.values()) {
        if (actor.running || actor.compacting)
          host.logger.warn(
            `The run of ${actor.threadId} did not end within ${ABORT_WAIT_MS / 1000} s of its abort; stopping without it (its prompt is reported as interrupted at the next start)`,
          );
      }
    }
  }
  for (const actor of actors.values()) actor.save();
  host.inbox.close();
}
