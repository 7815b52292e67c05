import type { RunnerEvent } from "../types.js";

/** What a heartbeat run answers when nothing needs the user: such an exchange leaves nothing. */
export const HEARTBEAT_OK = "HEARTBEAT_OK";

/** A heartbeat answer that says nothing needs the user (`HEARTBEAT_OK`, trailing punctuation allowed). */
export function isHeartbeatOk(answer: string): boolean {
  return /^[\s*_`"']*HEARTBEAT_OK[\s*_`"'.!]*$/.test(answer);
}

/** Events a held (heartbeat) run passes on at once: figures, never anything a chat shows. */
const UNHELD_EVENTS: ReadonlySet<RunnerEvent["type"]> = new Set(["usage", "context", "compaction"]);

/**
 * The gate a heartbeat run's events and messages pass: until its answer is known they are held,
 * since a quiet beat (HEARTBEAT_OK, or one that failed) must not reach a chat, not even as
 * streamed text, nor be saved. `release` ends the hold — the beat said something, or a person
 * steered it (their words are a conversation now, never dropped with a quiet beat).
 */
export interface QuietRunGate {
  /** An event of the run: passed on, or held while the run is held. */
  emit(event: RunnerEvent): void;
  /** The run's messages wait with its events (persist does nothing while this is true). */
  readonly holding: boolean;
  /** True once a held run was released by a steer: it cannot end quiet any more. */
  readonly steered: boolean;
  /** A run starts: held when `heartbeat`; `onRelease` runs once if it is released. */
  start(heartbeat: boolean, onRelease: () => void): void;
  /** The run's events go out (held ones first, in order); its messages may be saved. */
  release(): void;
  /** A person's message was steered into the run: released, and never quiet. */
  steer(): void;
  /** The held events are dropped (a quiet end). */
  drop(): void;
  /** The run is over: nothing held any more. */
  end(): void;
}

export function createQuietRunGate(emitNow: (event: RunnerEvent) => void): QuietRunGate {
  let held: RunnerEvent[] | undefined;
  let onRelease: (() => void) | undefined;
  const gate: QuietRunGate & { holding: boolean; steered: boolean } = {
    holding: false,
    steered: false,
    emit(event) {
      // Live output of a held run would be stale by its release: its tool_result says it all.
      if (held && event.type === "tool_output") return;
      if (held && !UNHELD_EVENTS.has(event.type)) held.push(event);
      else emitNow(event);
    },
    start(heartbeat, release) {
      held = heartbeat ? [] : undefined;
      gate.holding = heartbeat;
      gate.steered = false;
      onRelease = heartbeat ? release : undefined;
    },
    release() {
      const kept = held ?? [];
      const then = onRelease;
      held = undefined;
      onRelease = undefined;
      gate.holding = false;
      then?.();
      for (const event of kept) emitNow(event);
    },
    steer() {
      if (!gate.holding) return;
      gate.steered = true;
      gate.release();
    },
    drop() {
      held = undefined;
      onRelease = undefined;
      gate.holding = false;
    },
    end() {
      gate.drop();
    },
  };
  return gate;
}
