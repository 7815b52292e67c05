import { join } from "node:path";
import { type Logger, silentLogger } from "../logging/logger.js";
import { DueHeap, type HeapEntry } from "./due-heap.js";
import type { EventTiming } from "./event-file.js";
import { RUNS_FILE, type RunRecord, type RunsJournal } from "./event-runs.js";
import type { EventWatcher } from "./event-watcher.js";
import type { EventBusOptions, EventBusReport, EventClock } from "./types.js";

/** `<home>/events`: the event files (the source of truth) and the runs journal. */
export const EVENTS_DIR = "events";

/** A timer is set at most this far ahead (node's limit is 24.8 days); at its end it is set again. */
const MAX_TIMER_MS = 6 * 60 * 60 * 1000;
/** How long the journal remembers an event whose file is gone. */
const KEEP_GONE_MS = 7 * 24 * 60 * 60 * 1000;

const realClock: EventClock = {
  now: () => Date.now(),
  setTimer: (fn, ms) => setTimeout(fn, ms),
  clearTimer: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** An event file as the bus holds it between firings. */
export interface Loaded {
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

/**
 * What the event bus holds: the loaded events, their index by thread, the heap of due slots,
 * the one timer and the runs journal. The steps (firing, loading) are plain functions over it.
 */
export class EventBusState {
  readonly options: EventBusOptions;
  readonly dir: string;
  readonly logger: Logger;
  readonly clock: EventClock;
  /** GUPPY_TIMEZONE: the zone of schedules that name none. */
  readonly zone: string | undefined;
  readonly loaded = new Map<string, Loaded>();
  /** Event ids by canonical target thread. */
  readonly byThread = new Map<string, Set<string>>();
  readonly heap = new DueHeap();
  journal: RunsJournal | undefined;
  watcher: EventWatcher | undefined;
  running = false;
  /** The start scan is under way (its files were written while guppy may have been down). */
  scanning = false;
  private timer: unknown;
  private timerDue: number | undefined;
  /** Records appended since the journal was last compacted. */
  private appended = 0;
  private generation = 0;

  /** `onDue`: runs when the timer for the heap's top goes off. */
  constructor(
    options: EventBusOptions,
    private readonly onDue: () => void,
  ) {
    this.options = options;
    this.dir = join(options.home, EVENTS_DIR);
    this.logger = options.logger ?? silentLogger;
    this.clock = options.clock ?? realClock;
    this.zone = options.timezone;
  }

  report(r: EventBusReport): void {
    try {
      this.options.report?.(r);
    } catch (error) {
      this.logger.warn("events: report failed", { error: String(error) });
    }
  }

  /** Whether a heap entry is its event's current slot (not one left by a reschedule). */
  current(e: HeapEntry): boolean {
    const l = this.loaded.get(e.id);
    return l !== undefined && l.gen === e.gen && l.due === e.due;
  }

  /** Sets an event's next firing (undefined: none) and the timer. */
  schedule(l: Loaded, due: number | undefined): void {
    l.gen = ++this.generation;
    l.due = due;
    if (due !== undefined) this.heap.push({ due, id: l.spec.id, gen: l.gen });
    // Stale entries pile up when files change often: rebuilt when they outnumber live ones.
    if (this.heap.size > 2 * this.loaded.size + 1024) this.heap.rebuild((e) => this.current(e));
    this.arm();
  }

  /** Sets the one timer for the earliest current slot (or clears it: none). */
  arm(): void {
    if (!this.running) return;
    const { heap, clock } = this;
    while (heap.size > 0 && !this.current(heap.peek() as HeapEntry)) heap.pop();
    const top = heap.peek();
    if (!top) {
      if (this.timer !== undefined) clock.clearTimer(this.timer);
      this.timer = undefined;
      this.timerDue = undefined;
      return;
    }
    if (this.timer !== undefined && this.timerDue === top.due) return;
    if (this.timer !== undefined) clock.clearTimer(this.timer);
    this.timerDue = top.due;
    const wait = Math.min(Math.max(0, top.due - clock.now()), MAX_TIMER_MS);
    this.timer = clock.setTimer(() => {
      this.timer = undefined;
      this.timerDue = undefined;
      this.onDue();
    }, wait);
    (this.timer as { unref?: () => void }).unref?.();
  }

  /** Stops the timer; the caller stops the watcher and closes the journal. */
  clearTimer(): void {
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = undefined;
  }

  /**
   * What compaction keeps: the last record of each loaded event, and of events gone for less than
   * a week (a file put back — a kill -9 before its removal, a restored backup — is not re-sent).
   */
  readonly keepRecord = (r: RunRecord): boolean =>
    this.loaded.has(r.id) || this.clock.now() - r.at < KEEP_GONE_MS;

  /** Appends to the runs journal (fsync'd), compacting it now and then; false: not written. */
  record(records: RunRecord[]): boolean {
    if (records.length === 0) return true;
    try {
      this.journal?.record(records);
      this.appended += records.length;
      if (this.appended > Math.max(1000, 2 * this.loaded.size)) {
        this.appended = 0;
        this.journal?.compact(this.keepRecord);
      }
      return true;
    } catch (error) {
      this.logger.error(`events: could not write ${RUNS_FILE}`, { error: String(error) });
      return false;
    }
  }

  /** Drops a loaded event (its heap entries go stale). */
  forget(id: string): void {
    const l = this.loaded.get(id);
    if (!l) return;
    this.loaded.delete(id);
    if (l.threadKey) {
      const ids = this.byThread.get(l.threadKey);
      ids?.delete(id);
      if (ids?.size === 0) this.byThread.delete(l.threadKey);
    }
    l.due = undefined;
  }
}
