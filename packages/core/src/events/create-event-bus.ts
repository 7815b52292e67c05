import { rmSync } from "node:fs";
import { join } from "node:path";
import { readTextNoFollow } from "../fs/no-follow.js";
import { type Logger, silentLogger } from "../logging/logger.js";
import { canonicalThreadId } from "../store/thread-layout.js";
import type { Orchestrator, PromptOrigin, SendResult } from "../types.js";
import {
  describeTarget,
  type EventSpec,
  type EventTiming,
  eventTiming,
  parseEventFile,
} from "./event-file.js";
import { openRunsJournal, RUNS_FILE, type RunRecord, type RunsJournal } from "./event-runs.js";
import { eventZone, localTime, nextSlot, oneShotTime } from "./event-schedule.js";
import { createEventWatcher, type EventWatcher } from "./event-watcher.js";

/** `<home>/events`: the event files (the source of truth) and the runs journal. */
export const EVENTS_DIR = "events";

/** A one-shot fired this long after its time (guppy was down, or it was added late) is "late". */
const LATE_MS = 1000;
/** A timer is set at most this far ahead (node's limit is 24.8 days); at its end it is set again. */
const MAX_TIMER_MS = 6 * 60 * 60 * 1000;
/** Missed slots of a periodic event are counted up to this many (a long outage: "10000+"). */
const MAX_MISSED_COUNT = 10_000;

/** How long the journal remembers an event whose file is gone. */
const KEEP_GONE_MS = 7 * 24 * 60 * 60 * 1000;

/** Time and timers, injectable so a test can walk a schedule through a daylight-saving day. */
export interface EventClock {
  now(): number;
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
}

const realClock: EventClock = {
  now: () => Date.now(),
  setTimer: (fn, ms) => setTimeout(fn, ms),
  clearTimer: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** What the bus did, for the gateway's readable log. */
export type EventBusReport =
  | {
      type: "fired";
      id: string;
      /** The thread the prompt went to (a channel target: the new thread, once opened). */
      threadId: string;
      slot: number;
      /** How long after its slot the prompt was sent, ms. */
      delayMs: number;
      late?: true;
    }
  | { type: "skipped"; id: string; slot: number; reason: string }
  | { type: "missed"; id: string; count: number; last: number }
  | { type: "invalid"; id: string; problem: string; file: string }
  /** The start scan is done: `count` events loaded in `ms`. */
  | { type: "loaded"; count: number; ms: number };

/** One loaded event as `guppy events list`, `/status` and `GET /v1/threads` show it. */
export interface ScheduledEvent {
  id: string;
  type: EventSpec["type"];
  target: string;
  schedule?: string;
  timezone?: string;
  /** ISO time of its next firing (none: a periodic schedule that never comes again). */
  nextRun?: string;
}

export interface EventBusOptions {
  /** GUPPY_HOME: events are `<home>/events/*.json`. */
  home: string;
  orchestrator: Pick<Orchestrator, "send" | "sendToChannel">;
  /** GUPPY_TIMEZONE: the zone of schedules that name none (absent: the system's). */
  timezone?: string;
  logger?: Logger;
  report?(report: EventBusReport): void;
  clock?: EventClock;
  /** The watcher's debounce and retry waits (tests shorten nothing by default). */
  debounceMs?: number;
  retryDelaysMs?: readonly number[];
}

export interface EventBus {
  /**
   * Opens the runs journal, watches the folder and reads every event file there, setting the
   * timer as it goes; resolves once all are read (a few hundred before it returns).
   */
  start(): Promise<void>;
  /** Stops the timer and the watcher: nothing fires after this (a gateway shutting down). */
  stop(): void;
  list(): ScheduledEvent[];
  /** The events that target `threadId` (any spelling), for its status. */
  eventsOf(threadId: string): ScheduledEvent[];
}

interface Loaded {
  /** The file's fields but its text: read again at each firing (the file is the source of truth). */
  spec: EventTiming;
  /** Epoch ms of the next firing; undefined: none to come. */
  due?: number;
  /** An immediate event's slot: its file's modification time. */
  mtimeMs: number;
  /** Bumped at every reschedule: heap entries of older generations are stale. */
  gen: number;
  /** The canonical target thread (a thread target). */
  threadKey?: string;
}

interface HeapEntry {
  due: number;
  id: string;
  gen: number;
}

/**
 * The event bus: event files in `<home>/events/` become prompts through the orchestrator at
 * their time. One timer for the earliest due slot of all events (a min-heap), not one per
 * event: 10,000 periodic events cost a heap, not 10,000 timers. Every slot is written to the
 * runs journal (fsync'd) before its prompt is sent, and a slot the journal has is never sent
 * again: a restart or a kill -9 between the two loses that one firing rather than doubling it
 * (the orchestrator's inbox makes the prompt itself durable once `send` returned).
 */
// Long by design: the heap, the timer and the firing share the loaded events.
export function createEventBus(options: EventBusOptions): EventBus {
  const dir = join(options.home, EVENTS_DIR);
  const logger = options.logger ?? silentLogger;
  const clock = options.clock ?? realClock;
  const zone = options.timezone;
  const loaded = new Map<string, Loaded>();
  const byThread = new Map<string, Set<string>>();
  const heap: HeapEntry[] = [];
  let journal: RunsJournal | undefined;
  let watcher: EventWatcher | undefined;
  let timer: unknown;
  let timerDue: number | undefined;
  let appended = 0;
  let running = false;
  /** The start scan is under way (its files were written while guppy may have been down). */
  let scanning = false;
  let generation = 0;

  const report = (r: EventBusReport) => {
    try {
      options.report?.(r);
    } catch (error) {
      logger.warn("events: report failed", { error: String(error) });
    }
  };

  // ------------------------------------------------------------------ the heap

  const push = (entry: HeapEntry) => {
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((heap[parent] as HeapEntry).due <= entry.due) break;
      heap[i] = heap[parent] as HeapEntry;
      i = parent;
    }
    heap[i] = entry;
  };

  const pop = (): HeapEntry | undefined => {
    const top = heap[0];
    const last = heap.pop();
    if (heap.length === 0 || !last) return top;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      let mDue = last.due;
      if (l < heap.length && (heap[l] as HeapEntry).due < mDue) {
        m = l;
        mDue = (heap[l] as HeapEntry).due;
      }
      if (r < heap.length && (heap[r] as HeapEntry).due < mDue) m = r;
      if (m === i) break;
      heap[i] = heap[m] as HeapEntry;
      i = m;
    }
    heap[i] = last;
    return top;
  };

  const current = (e: HeapEntry) => {
    const l = loaded.get(e.id);
    return l !== undefined && l.gen === e.gen && l.due === e.due;
  };

  const schedule = (l: Loaded, due: number | undefined) => {
    l.gen = ++generation;
    l.due = due;
    if (due !== undefined) push({ due, id: l.spec.id, gen: l.gen });
    // Stale entries pile up when files change often: rebuilt when they outnumber live ones.
    if (heap.length > 2 * loaded.size + 1024) {
      const live = heap.filter(current);
      heap.length = 0;
      for (const e of live) push(e);
    }
    arm();
  };

  // ------------------------------------------------------------------ the timer

  const arm = () => {
    if (!running) return;
    while (heap.length > 0 && !current(heap[0] as HeapEntry)) pop();
    const top = heap[0];
    if (!top) {
      if (timer !== undefined) clock.clearTimer(timer);
      timer = undefined;
      timerDue = undefined;
      return;
    }
    if (timer !== undefined && timerDue === top.due) return;
    if (timer !== undefined) clock.clearTimer(timer);
    timerDue = top.due;
    const wait = Math.min(Math.max(0, top.due - clock.now()), MAX_TIMER_MS);
    timer = clock.setTimer(tick, wait);
    (timer as { unref?: () => void }).unref?.();
  };

  const tick = () => {
    timer = undefined;
    timerDue = undefined;
    const now = clock.now();
    const due: Array<{ l: Loaded; text: string; due: number; slot: number; late: boolean }> = [];
    while (running && heap.length > 0) {
      const top = heap[0] as HeapEntry;
      if (!current(top)) {
        pop();
        continue;
      }
      if (top.due > now) break;
      pop();
      const l = loaded.get(top.id);
      if (!l) continue;
      const slot = l.spec.type === "immediate" ? Math.floor(l.mtimeMs) : top.due;
      if ((journal?.lastSlot(l.spec.id) ?? Number.NEGATIVE_INFINITY) >= slot) {
        // Sent before (a file read again after a restart): never twice.
        afterFiring(l, slot, now);
        continue;
      }
      const text = textOf(l.spec.id);
      if (typeof text !== "string") {
        // Not recorded: a file being rewritten is read again by the watcher, and fires then.
        report({ type: "skipped", id: l.spec.id, slot, reason: text.problem });
        if (l.spec.type === "periodic") afterFiring(l, slot, now);
        else schedule(l, undefined);
        continue;
      }
      due.push({
        l,
        text,
        due: top.due,
        slot,
        late: l.spec.type === "one-shot" && now - slot > LATE_MS,
      });
    }
    // The slots due together are written in one append and one fsync, then sent.
    const recorded = record(
      due.map(({ l, slot, late }) => ({
        id: l.spec.id,
        slot,
        status: "firing" as const,
        at: now,
        ...(late ? { late: true as const } : {}),
      })),
    );
    for (const d of due) {
      if (recorded) fire(d.l, d.text, d.due, d.slot, d.late, now);
      else {
        report({
          type: "skipped",
          id: d.l.spec.id,
          slot: d.slot,
          reason: `could not record it in ${RUNS_FILE}`,
        });
        afterFiring(d.l, d.slot, now, true);
      }
    }
    arm();
  };

  // ------------------------------------------------------------------ firing

  /** An event's text, read from its file as it fires; or why it does not read now. */
  const textOf = (id: string): string | { problem: string } => {
    let content: string;
    try {
      content = readTextNoFollow(dir, join(dir, `${id}.json`));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return { problem: code === "ENOENT" ? `${id}.json is gone` : `${id}.json: ${String(error)}` };
    }
    const parsed = parseEventFile(id, content);
    return parsed.ok ? parsed.event.text : { problem: `${id}.json: ${parsed.problem}` };
  };

  /**
   * What compaction keeps: the last record of each loaded event, and of events gone for less than
   * a week (a file put back — a kill -9 before its removal, a restored backup — is not re-sent).
   */
  const keepRecord = (r: RunRecord) => loaded.has(r.id) || clock.now() - r.at < KEEP_GONE_MS;

  const record = (records: RunRecord[]): boolean => {
    if (records.length === 0) return true;
    try {
      journal?.record(records);
      appended += records.length;
      if (appended > Math.max(1000, 2 * loaded.size)) {
        appended = 0;
        journal?.compact(keepRecord);
      }
      return true;
    } catch (error) {
      logger.error(`events: could not write ${RUNS_FILE}`, { error: String(error) });
      return false;
    }
  };

  /** Sends a slot recorded as firing. `due`: when it was set to fire (an immediate one: now). */
  const fire = (
    l: Loaded,
    eventText: string,
    due: number,
    slot: number,
    late: boolean,
    now: number,
  ) => {
    const { spec } = l;
    const wasDue = late ? `, late: it was due ${localTime(slot, eventZone(spec, zone))}` : "";
    const text = `[scheduled event "${spec.id}"${wasDue}] ${eventText}`;
    const origin: PromptOrigin = { kind: "event", name: spec.id, ...(late ? { late } : {}) };
    const messageId = `event:${spec.id}:${slot}`;
    const delayMs = Math.max(0, clock.now() - due);
    if ("threadId" in spec) {
      const result = options.orchestrator.send(spec.threadId, {
        type: "prompt",
        text,
        origin,
        messageId,
      });
      outcome(spec, slot, result, spec.threadId, delayMs, late);
    } else {
      options.orchestrator
        .sendToChannel(spec.adapterId, spec.channelId, text, { origin, messageId })
        .then((threadId) => {
          if (threadId) fired(spec, slot, threadId, delayMs, late);
          else skipped(spec, slot, `could not open a thread in ${describeTarget(spec)}`);
        })
        .catch((error) => skipped(spec, slot, String(error)));
    }
    afterFiring(l, slot, now);
  };

  const fired = (
    spec: EventTiming,
    slot: number,
    threadId: string,
    delayMs: number,
    late: boolean,
  ) => report({ type: "fired", id: spec.id, threadId, slot, delayMs, ...(late ? { late } : {}) });

  const outcome = (
    spec: EventTiming,
    slot: number,
    result: SendResult,
    threadId: string,
    delayMs: number,
    late: boolean,
  ) => {
    if (result.status === "queued") {
      fired(spec, slot, threadId, delayMs, late);
      return;
    }
    const reason =
      result.status === "busy"
        ? `${threadId} is busy (${result.queued} prompt(s) queued)`
        : result.status === "duplicate"
          ? `${threadId} has taken this slot already`
          : "reason" in result
            ? `${threadId}: ${result.reason}`
            : `${threadId}: ${result.status}`;
    skipped(spec, slot, reason);
  };

  const skipped = (spec: EventTiming, slot: number, reason: string) => {
    record([{ id: spec.id, slot, status: "skipped", at: clock.now(), reason }]);
    report({ type: "skipped", id: spec.id, slot, reason });
  };

  /** An immediate or one-shot file goes; a periodic event is set for its next slot. */
  const afterFiring = (l: Loaded, slot: number, now: number, failed = false) => {
    const { spec } = l;
    if (spec.type !== "periodic") {
      if (failed) return schedule(l, undefined);
      forget(spec.id);
      try {
        rmSync(join(dir, `${spec.id}.json`), { force: true });
      } catch (error) {
        logger.warn(`events: could not remove ${spec.id}.json`, { error: String(error) });
      }
      return;
    }
    let next = nextSlot(spec, slot, zone);
    // Behind by more than a slot (the process was stalled): on from now, not a burst.
    if (next !== undefined && next < now - LATE_MS) next = nextSlot(spec, now, zone);
    schedule(l, next);
  };

  // ------------------------------------------------------------------ loading

  const forget = (id: string) => {
    const l = loaded.get(id);
    if (!l) return;
    loaded.delete(id);
    if (l.threadKey) {
      const ids = byThread.get(l.threadKey);
      ids?.delete(id);
      if (ids?.size === 0) byThread.delete(l.threadKey);
    }
    l.due = undefined;
  };

  const load = (file: EventSpec, mtimeMs: number) => {
    const spec = eventTiming(file);
    forget(spec.id);
    const l: Loaded = { spec, mtimeMs, gen: 0, due: undefined, threadKey: undefined };
    if ("threadId" in spec) {
      const key = canonicalThreadId(spec.threadId);
      // Most ids are written canonically: one string for both, not two.
      l.threadKey = key === spec.threadId ? spec.threadId : key;
      const ids = byThread.get(l.threadKey) ?? new Set<string>();
      byThread.set(l.threadKey, ids);
      ids.add(spec.id);
    }
    loaded.set(spec.id, l);
    const now = clock.now();
    const last = journal?.lastSlot(spec.id);
    if (spec.type === "immediate") {
      const slot = Math.floor(mtimeMs);
      // Fired already (the process died before removing it): remove it now.
      if (last !== undefined && last >= slot) return afterFiring(l, slot, now);
      return schedule(l, now);
    }
    if (spec.type === "one-shot") {
      const at = oneShotTime(spec, zone);
      if (at === undefined) return schedule(l, undefined);
      if (last !== undefined && last >= at) return afterFiring(l, at, now);
      return schedule(l, at);
    }
    // Slots missed while guppy was down: counted at start only (a file edited later may have a
    // new schedule, whose past slots were never due).
    if (last !== undefined && scanning) recordMissed(spec, last, now);
    schedule(l, nextSlot(spec, now, zone));
  };

  /** A periodic event's slots after the last recorded one and up to now: missed, not replayed. */
  const recordMissed = (spec: EventTiming, last: number, now: number) => {
    let count = 0;
    let lastMissed = last;
    for (let slot = nextSlot(spec, last, zone); slot !== undefined && slot <= now; ) {
      count++;
      lastMissed = slot;
      if (count >= MAX_MISSED_COUNT) break;
      slot = nextSlot(spec, slot, zone);
    }
    if (count === 0) return;
    record([{ id: spec.id, slot: lastMissed, status: "missed", at: now, count }]);
    report({ type: "missed", id: spec.id, count, last: lastMissed });
  };

  const describe = (l: Loaded): ScheduledEvent => ({
    id: l.spec.id,
    type: l.spec.type,
    target: describeTarget(l.spec),
    ...(l.spec.schedule ? { schedule: l.spec.schedule } : {}),
    ...(l.spec.timezone ? { timezone: l.spec.timezone } : {}),
    ...(l.due !== undefined ? { nextRun: new Date(l.due).toISOString() } : {}),
  });

  return {
    start() {
      if (running) return Promise.resolve();
      running = true;
      journal = openRunsJournal(join(dir, RUNS_FILE), logger);
      watcher = createEventWatcher({
        dir,
        logger,
        ...(options.debounceMs !== undefined ? { debounceMs: options.debounceMs } : {}),
        ...(options.retryDelaysMs ? { retryDelaysMs: options.retryDelaysMs } : {}),
        handlers: {
          loaded: (spec, mtimeMs) => load(spec, mtimeMs),
          removed: (id) => {
            forget(id);
            arm();
          },
          invalid: (id, problem, file) => {
            forget(id);
            report({ type: "invalid", id, problem, file });
          },
        },
      });
      const t0 = performance.now();
      scanning = true;
      return watcher.start().then(() => {
        scanning = false;
        if (!running) return;
        try {
          journal?.compact(keepRecord);
        } catch (error) {
          logger.warn(`events: could not compact ${RUNS_FILE}`, { error: String(error) });
        }
        arm();
        report({ type: "loaded", count: loaded.size, ms: Math.round(performance.now() - t0) });
      });
    },
    stop() {
      running = false;
      watcher?.stop();
      if (timer !== undefined) clock.clearTimer(timer);
      timer = undefined;
      journal?.close();
    },
    list: () => [...loaded.values()].map(describe).sort((a, b) => a.id.localeCompare(b.id)),
    eventsOf(threadId) {
      let key: string;
      try {
        key = canonicalThreadId(threadId);
      } catch {
        return [];
      }
      const ids = byThread.get(key);
      if (!ids) return [];
      return [...ids].flatMap((id) => {
        const l = loaded.get(id);
        return l ? [describe(l)] : [];
      });
    },
  };
}
