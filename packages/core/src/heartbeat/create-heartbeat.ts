import type { Logger } from "../logging/logger.js";
import type { OrchestratorListener } from "../orchestrator/types.js";
import type { Orchestrator } from "../types.js";
import { type ActiveHours, withinActiveHours } from "./active-hours.js";
import { HEARTBEAT_FILE, heartbeatPrompt, readHeartbeatFile } from "./heartbeat-file.js";
import { heartbeatThread, type LastChannel } from "./last-channel.js";

export interface HeartbeatOptions {
  home: string;
  /** GUPPY_HEARTBEAT_SECONDS: time between beats; 0 turns the heartbeat off. */
  intervalSeconds: number;
  /** GUPPY_HEARTBEAT_HOURS: beats outside the window are skipped (absent: all day). */
  hours?: ActiveHours;
  /** GUPPY_TIMEZONE: the zone the window is read in (absent: the system's). */
  timeZone?: string;
  orchestrator: Pick<Orchestrator, "send" | "threads" | "status" | "threadHandle">;
  /** The orchestrator's events: a beat's run is over at its `run_end`. */
  subscribe: (listener: OrchestratorListener) => () => void;
  lastChannel: LastChannel;
  logger: Logger;
  /** The clock (tests). */
  now?: () => Date;
}

/** What one beat did: ran a prompt in a thread, or why it was skipped. */
export type BeatOutcome =
  | { ran: true; threadId: string; inboxId: string }
  | {
      ran: false;
      reason: "previous_running" | "outside_hours" | "nothing_actionable" | "no_thread" | "refused";
      detail?: string;
    };

export interface Heartbeat {
  /** Starts the timer: the first beat is one interval from now (none at start, no catching up). */
  start(): void;
  stop(): void;
  /** One beat now (the timer's; tests). */
  beat(): BeatOutcome;
}

/**
 * Every interval, reads HEARTBEAT.md and — only if it asks for something, within active hours,
 * and the previous beat's run is over — sends its checklist as a prompt marked `heartbeat` to the
 * owner's thread. Everything that decides against a beat happens before any model request, so an
 * idle heartbeat costs no tokens; a skipped beat is skipped, never made up later (after the night,
 * a restart or a long run there is no burst).
 */
export function createHeartbeat(options: HeartbeatOptions): Heartbeat {
  const { logger, orchestrator } = options;
  const now = options.now ?? (() => new Date());
  let timer: NodeJS.Timeout | undefined;
  let unsubscribe: (() => void) | undefined;
  /** The inbox id and thread of the beat whose run has not ended yet. */
  let pending: { inboxId: string; threadId: string } | undefined;

  const stillRunning = (): boolean => {
    if (!pending) return false;
    // Its run_end was missed (the thread's agent was reset or unloaded): nothing waits there.
    const status = orchestrator.status(pending.threadId);
    if (status.queued === 0 && (status.state === "idle" || status.state === "inactive")) {
      pending = undefined;
      return false;
    }
    return true;
  };

  /** The last refusal logged (a symlinked HEARTBEAT.md is named once, not at every beat). */
  let lastRefusal: string | undefined;

  const beat = (): BeatOutcome => {
    if (stillRunning()) return skip("previous_running", pending?.threadId);
    if (!withinActiveHours(options.hours, now(), options.timeZone)) return skip("outside_hours");
    const content = readHeartbeatFile(options.home, (line) => {
      if (line !== lastRefusal) logger.warn(`heartbeat: ${line}`);
      lastRefusal = line;
    });
    if (content === undefined) return skip("nothing_actionable");
    const threadId = heartbeatThread(options.lastChannel, () => orchestrator.threads());
    if (!threadId) return skip("no_thread");
    // A fresh handle from the thread's channel: the one its last prompt brought has ended.
    const thread = orchestrator.threadHandle(threadId);
    const result = orchestrator.send(threadId, {
      type: "prompt",
      ...(thread ? { thread } : {}),
      text: heartbeatPrompt(content),
      userId: "guppy",
      userName: "heartbeat",
      origin: { kind: "heartbeat" },
    });
    if (result.status !== "queued") {
      return skip("refused", `${threadId}: ${"reason" in result ? result.reason : result.status}`);
    }
    pending = { inboxId: result.inboxId, threadId };
    logger.info(`heartbeat: running ${HEARTBEAT_FILE} in ${threadId}`, {
      inboxId: result.inboxId,
    });
    return { ran: true, threadId, inboxId: result.inboxId };
  };

  const skip = (reason: Extract<BeatOutcome, { ran: false }>["reason"], detail?: string) => {
    logger.info(`heartbeat: skipped (${SKIP_REASONS[reason]})`, detail ? { detail } : undefined);
    return { ran: false as const, reason, ...(detail ? { detail } : {}) };
  };

  return {
    start() {
      if (timer || options.intervalSeconds <= 0) return;
      unsubscribe = options.subscribe((event) => {
        if (
          event.type === "runner" &&
          event.event.type === "run_end" &&
          event.inboxId === pending?.inboxId
        ) {
          pending = undefined;
        }
      });
      // setInterval never fires a missed tick twice: a suspended machine gets one beat, not many.
      timer = setInterval(() => {
        try {
          beat();
        } catch (error) {
          logger.warn("heartbeat: the beat failed", { error: String(error) });
        }
      }, options.intervalSeconds * 1000);
      timer.unref();
      const hours = options.hours
        ? ` within ${clock(options.hours.start)}-${clock(options.hours.end)}`
        : "";
      logger.info(`heartbeat: every ${options.intervalSeconds} s${hours}`);
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
      unsubscribe?.();
      unsubscribe = undefined;
    },
    beat,
  };
}

/** Minutes since midnight as HH:MM. */
const clock = (minutes: number) =>
  `${String(Math.floor(minutes / 60)).padStart(2, "0")}:${String(minutes % 60).padStart(2, "0")}`;

const SKIP_REASONS = {
  previous_running: "the previous beat still runs",
  outside_hours: "outside GUPPY_HEARTBEAT_HOURS",
  nothing_actionable: `${HEARTBEAT_FILE} is missing or holds nothing actionable`,
  no_thread: "no chat, HTTP or terminal thread of the owner yet",
  refused: "the thread did not accept the prompt",
} as const;
