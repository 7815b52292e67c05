import { rmSync } from "node:fs";
import { join } from "node:path";
import { readTextNoFollow } from "../fs/no-follow.js";
import type { PromptOrigin, SendResult } from "../types.js";
import type { HeapEntry } from "./due-heap.js";
import type { EventBusState, Loaded } from "./event-bus-state.js";
import { describeTarget, type EventTiming, parseEventFile } from "./event-file.js";
import { scheduleForm } from "./event-kinds.js";
import { RUNS_FILE } from "./event-runs.js";
import { eventZone, localTime, nextSlot } from "./event-schedule.js";

/** A one-shot fired this long after its time (guppy was down, or it was added late) is "late". */
const LATE_MS = 1000;

interface DueSlot {
  l: Loaded;
  text: string;
  due: number;
  slot: number;
  late: boolean;
}

/**
 * The timer went off: every slot due now is written to the runs journal (one append, one fsync)
 * and then sent; a slot the journal has already is never sent again.
 */
export function fireDue(bus: EventBusState): void {
  const { heap } = bus;
  const now = bus.clock.now();
  const due: DueSlot[] = [];
  while (bus.running && heap.size > 0) {
    const top = heap.peek() as HeapEntry;
    if (!bus.current(top)) {
      heap.pop();
      continue;
    }
    if (top.due > now) break;
    heap.pop();
    const l = bus.loaded.get(top.id);
    if (!l) continue;
    const slot = scheduleForm(l.spec.type) === "none" ? Math.floor(l.mtimeMs) : top.due;
    if ((bus.journal?.lastSlot(l.spec.id) ?? Number.NEGATIVE_INFINITY) >= slot) {
      // Sent before (a file read again after a restart): never twice.
      afterFiring(bus, l, slot, now);
      continue;
    }
    const text = textOf(bus.dir, l.spec.id);
    if (typeof text !== "string") {
      // Not recorded: a file being rewritten is read again by the watcher, and fires then.
      bus.report({ type: "skipped", id: l.spec.id, slot, reason: text.problem });
      if (scheduleForm(l.spec.type) === "cron") afterFiring(bus, l, slot, now);
      else bus.schedule(l, undefined);
      continue;
    }
    due.push({
      l,
      text,
      due: top.due,
      slot,
      late: scheduleForm(l.spec.type) === "time" && now - slot > LATE_MS,
    });
  }
  // The slots due together are written in one append and one fsync, then sent.
  const recorded = bus.record(
    due.map(({ l, slot, late }) => ({
      id: l.spec.id,
      slot,
      status: "firing" as const,
      at: now,
      ...(late ? { late: true as const } : {}),
    })),
  );
  for (const d of due) {
    if (recorded) fire(bus, d, now);
    else {
      bus.report({
        type: "skipped",
        id: d.l.spec.id,
        slot: d.slot,
        reason: `could not record it in ${RUNS_FILE}`,
      });
      afterFiring(bus, d.l, d.slot, now, true);
    }
  }
  bus.arm();
}

/** An event's text, read from its file as it fires; or why it does not read now. */
function textOf(dir: string, id: string): string | { problem: string } {
  let content: string;
  try {
    content = readTextNoFollow(dir, join(dir, `${id}.json`));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { problem: code === "ENOENT" ? `${id}.json is gone` : `${id}.json: ${String(error)}` };
  }
  const parsed = parseEventFile(id, content);
  return parsed.ok ? parsed.event.text : { problem: `${id}.json: ${parsed.problem}` };
}

/** Sends a slot recorded as firing. `due`: when it was set to fire (an immediate one: now). */
function fire(bus: EventBusState, d: DueSlot, now: number): void {
  const { l, due, slot, late } = d;
  const { spec } = l;
  const wasDue = late ? `, late: it was due ${localTime(slot, eventZone(spec, bus.zone))}` : "";
  const text = `[scheduled event "${spec.id}"${wasDue}] ${d.text}`;
  const origin: PromptOrigin = { kind: "event", name: spec.id, ...(late ? { late } : {}) };
  const messageId = `event:${spec.id}:${slot}`;
  const delayMs = Math.max(0, bus.clock.now() - due);
  const { orchestrator } = bus.options;
  if ("threadId" in spec) {
    const result = orchestrator.send(spec.threadId, { type: "prompt", text, origin, messageId });
    outcome(bus, spec, slot, result, spec.threadId, delayMs, late);
  } else {
    orchestrator
      .sendToChannel(spec.adapterId, spec.channelId, text, { origin, messageId })
      .then((threadId) => {
        if (threadId) fired(bus, spec, slot, threadId, delayMs, late);
        else skipped(bus, spec, slot, `could not open a thread in ${describeTarget(spec)}`);
      })
      .catch((error) => skipped(bus, spec, slot, String(error)));
  }
  afterFiring(bus, l, slot, now);
}

function fired(
  bus: EventBusState,
  spec: EventTiming,
  slot: number,
  threadId: string,
  delayMs: number,
  late: boolean,
): void {
  bus.report({ type: "fired", id: spec.id, threadId, slot, delayMs, ...(late ? { late } : {}) });
}

function outcome(
  bus: EventBusState,
  spec: EventTiming,
  slot: number,
  result: SendResult,
  threadId: string,
  delayMs: number,
  late: boolean,
): void {
  if (result.status === "queued") {
    fired(bus, spec, slot, threadId, delayMs, late);
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
  skipped(bus, spec, slot, reason);
}

function skipped(bus: EventBusState, spec: EventTiming, slot: number, reason: string): void {
  bus.record([{ id: spec.id, slot, status: "skipped", at: bus.clock.now(), reason }]);
  bus.report({ type: "skipped", id: spec.id, slot, reason });
}

/** An immediate or one-shot file goes; a periodic event is set for its next slot. */
export function afterFiring(
  bus: EventBusState,
  l: Loaded,
  slot: number,
  now: number,
  failed = false,
) {
  const { spec } = l;
  if (scheduleForm(spec.type) !== "cron") {
    if (failed) return bus.schedule(l, undefined);
    bus.forget(spec.id);
    try {
      rmSync(join(bus.dir, `${spec.id}.json`), { force: true });
    } catch (error) {
      bus.logger.warn(`events: could not remove ${spec.id}.json`, { error: String(error) });
    }
    return;
  }
  let next = nextSlot(spec, slot, bus.zone);
  // Behind by more than a slot (the process was stalled): on from now, not a burst.
  if (next !== undefined && next < now - LATE_MS) next = nextSlot(spec, now, bus.zone);
  bus.schedule(l, next);
}
