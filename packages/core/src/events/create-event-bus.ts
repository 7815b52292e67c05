import { join } from "node:path";
import { canonicalThreadId } from "../store/thread-layout.js";
import { EventBusState } from "./event-bus-state.js";
import { fireDue } from "./event-firing.js";
import { describeEvent, loadEvent } from "./event-loading.js";
import { openRunsJournal, RUNS_FILE } from "./event-runs.js";
import { createEventWatcher } from "./event-watcher.js";
import type { EventBus, EventBusOptions } from "./types.js";

export { EVENTS_DIR } from "./event-bus-state.js";
export type {
  EventBus,
  EventBusOptions,
  EventBusReport,
  EventClock,
  ScheduledEvent,
} from "./types.js";

/**
 * The event bus: event files in `<home>/events/` become prompts through the orchestrator at
 * their time. One timer for the earliest due slot of all events (a min-heap), not one per
 * event: 10,000 periodic events cost a heap, not 10,000 timers. Every slot is written to the
 * runs journal (fsync'd) before its prompt is sent, and a slot the journal has is never sent
 * again: a restart or a kill -9 between the two loses that one firing rather than doubling it
 * (the orchestrator's inbox makes the prompt itself durable once `send` returned).
 */
export function createEventBus(options: EventBusOptions): EventBus {
  const bus: EventBusState = new EventBusState(options, () => fireDue(bus));
  const { dir, logger } = bus;

  return {
    start() {
      if (bus.running) return Promise.resolve();
      bus.running = true;
      bus.journal = openRunsJournal(join(dir, RUNS_FILE), logger);
      const watcher = createEventWatcher({
        dir,
        logger,
        ...(options.debounceMs !== undefined ? { debounceMs: options.debounceMs } : {}),
        ...(options.retryDelaysMs ? { retryDelaysMs: options.retryDelaysMs } : {}),
        handlers: {
          loaded: (spec, mtimeMs) => loadEvent(bus, spec, mtimeMs),
          removed: (id) => {
            bus.forget(id);
            bus.arm();
          },
          invalid: (id, problem, file) => {
            bus.forget(id);
            bus.report({ type: "invalid", id, problem, file });
          },
        },
      });
      bus.watcher = watcher;
      const t0 = performance.now();
      bus.scanning = true;
      return watcher.start().then(() => {
        bus.scanning = false;
        if (!bus.running) return;
        try {
          bus.journal?.compact(bus.keepRecord);
        } catch (error) {
          logger.warn(`events: could not compact ${RUNS_FILE}`, { error: String(error) });
        }
        bus.arm();
        bus.report({
          type: "loaded",
          count: bus.loaded.size,
          ms: Math.round(performance.now() - t0),
        });
      });
    },
    stop() {
      bus.running = false;
      bus.watcher?.stop();
      bus.clearTimer();
      bus.journal?.close();
    },
    list: () =>
      [...bus.loaded.values()].map(describeEvent).sort((a, b) => a.id.localeCompare(b.id)),
    eventsOf(threadId) {
      let key: string;
      try {
        key = canonicalThreadId(threadId);
      } catch {
        return [];
      }
      const ids = bus.byThread.get(key);
      if (!ids) return [];
      return [...ids].flatMap((id) => {
        const l = bus.loaded.get(id);
        return l ? [describeEvent(l)] : [];
      });
    },
  };
}
