import { canonicalThreadId } from "../store/thread-layout.js";
import type { EventBusState, Loaded } from "./event-bus-state.js";
import { describeTarget, type EventSpec, type EventTiming, eventTiming } from "./event-file.js";
import { afterFiring } from "./event-firing.js";
import { scheduleForm } from "./event-kinds.js";
import { nextSlot, oneShotTime } from "./event-schedule.js";
import type { ScheduledEvent } from "./types.js";

/** Missed slots of a periodic event are counted up to this many (a long outage: "10000+"). */
const MAX_MISSED_COUNT = 10_000;

/**
 * An event file read (at start or as it changed): it replaces what was loaded under its id and
 * is set for its next slot; one already fired (the journal has its slot) is done with now.
 */
export function loadEvent(bus: EventBusState, file: EventSpec, mtimeMs: number) {
  const spec = eventTiming(file);
  bus.forget(spec.id);
  const l: Loaded = { spec, mtimeMs, gen: 0, due: undefined, threadKey: undefined };
  if ("threadId" in spec) {
    const key = canonicalThreadId(spec.threadId);
    // Most ids are written canonically: one string for both, not two.
    l.threadKey = key === spec.threadId ? spec.threadId : key;
    const ids = bus.byThread.get(l.threadKey) ?? new Set<string>();
    bus.byThread.set(l.threadKey, ids);
    ids.add(spec.id);
  }
  bus.loaded.set(spec.id, l);
  const now = bus.clock.now();
  const last = bus.journal?.lastSlot(spec.id);
  const form = scheduleForm(spec.type);
  if (form === "none") {
    const slot = Math.floor(mtimeMs);
    // Fired already (the process died before removing it): remove it now.
    if (last !== undefined && last >= slot) return afterFiring(bus, l, slot, now);
    return bus.schedule(l, now);
  }
  if (form === "time") {
    const at = oneShotTime(spec, bus.zone);
    if (at === undefined) return bus.schedule(l, undefined);
    if (last !== undefined && last >= at) return afterFiring(bus, l, at, now);
    return bus.schedule(l, at);
  }
  // Slots missed while guppy was down: counted at start only (a file edited later may have a
  // new schedule, whose past slots were never due).
  if (last !== undefined && bus.scanning) recordMissed(bus, spec, last, now);
  bus.schedule(l, nextSlot(spec, now, bus.zone));
}

/** A periodic event's slots after the last recorded one and up to now: missed, not replayed. */
function recordMissed(bus: EventBusState, spec: EventTiming, last: number, now: number): void {
  let count = 0;
  let lastMissed = last;
  for (let slot = nextSlot(spec, last, bus.zone); slot !== undefined && slot <= now; ) {
    count++;
    lastMissed = slot;
    if (count >= MAX_MISSED_COUNT) break;
    slot = nextSlot(spec, slot, bus.zone);
  }
  if (count === 0) return;
  bus.record([{ id: spec.id, slot: lastMissed, status: "missed", at: now, count }]);
  bus.report({ type: "missed", id: spec.id, count, last: lastMissed });
}

/** A loaded event as the lists show it. */
export function describeEvent(l: Loaded): ScheduledEvent {
  return {
    id: l.spec.id,
    type: l.spec.type,
    target: describeTarget(l.spec),
    ...(l.spec.schedule ? { schedule: l.spec.schedule } : {}),
    ...(l.spec.timezone ? { timezone: l.spec.timezone } : {}),
    ...(l.due !== undefined ? { nextRun: new Date(l.due).toISOString() } : {}),
  };
}
