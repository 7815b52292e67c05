import { localParts } from "../time/local-time.js";
import { cronNext } from "./event-cron.js";
import type { EventSpec } from "./event-file.js";
import { scheduleForm } from "./event-kinds.js";

/** What an event's times depend on (a whole event file, or what the bus keeps of one). */
type Timing = Pick<EventSpec, "type" | "schedule" | "timezone">;

/** The zone an event's schedule is read in: its own, else GUPPY_TIMEZONE, else the system's. */
export function eventZone(
  event: Pick<EventSpec, "timezone">,
  defaultZone: string | undefined,
): string | undefined {
  return event.timezone ?? defaultZone;
}

/**
 * A one-shot event's time (epoch ms), whether past or not: an ISO time without a zone is local
 * to the event's zone (croner reads it so, daylight saving included).
 */
export function oneShotTime(event: Timing, defaultZone: string | undefined): number | undefined {
  if (scheduleForm(event.type) !== "time" || !event.schedule) return undefined;
  return cronNext(event.schedule, eventZone(event, defaultZone), 0);
}

/**
 * A periodic event's first slot strictly after `after` (epoch ms). Croner keeps wall-clock
 * rules: a daily `30 2 * * *` runs once on the day clocks skip 02:30 (at 03:00) and once on the
 * day they pass it twice.
 */
export function nextSlot(
  event: Timing,
  after: number,
  defaultZone: string | undefined,
): number | undefined {
  if (scheduleForm(event.type) !== "cron" || !event.schedule) return undefined;
  return cronNext(event.schedule, eventZone(event, defaultZone), after);
}

/**
 * When the event fires next as seen at `now`: an immediate one now, a one-shot at its time (now
 * if that passed), a periodic one at its next slot.
 */
export function nextRun(
  event: EventSpec,
  now: number,
  defaultZone: string | undefined,
): number | undefined {
  const form = scheduleForm(event.type);
  if (form === "none") return now;
  if (form === "time") {
    const at = oneShotTime(event, defaultZone);
    return at === undefined ? undefined : Math.max(at, now);
  }
  return nextSlot(event, now, defaultZone);
}

/** `2026-11-27 09:14:00 Europe/Berlin`: a time as the event's zone shows it. */
export function localTime(ms: number, zone: string | undefined): string {
  const p = localParts(new Date(ms), zone);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${p.date} ${two(p.hour)}:${two(p.minute)}:${two(p.second)} ${p.zone}`;
}
