import { Cron } from "croner";

/**
 * The most recently used croner jobs, by schedule and zone (a job holds its parsed pattern, a
 * few kB): reading a file and setting its next slot use one job, and events sharing a schedule
 * share it. A job is ~80 kB of heap: bounded small on purpose — 10,000 events with as many schedules must not keep
 * 10,000 jobs; a slot is worked out once per firing, so a miss costs a parse then. Paused jobs:
 * croner sets no timer for them; the bus keeps one timer for the earliest slot of all events.
 */
const crons = new Map<string, Cron>();
const MAX_CRONS = 4;

/** A paused croner job for `schedule` in `timezone` (throws croner's error for a bad pattern). */
export function cronFor(schedule: string, timezone: string | undefined): Cron {
  const key = `${timezone ?? ""}\u0000${schedule}`;
  let cron = crons.get(key);
  if (cron) {
    crons.delete(key);
  } else {
    cron = new Cron(schedule, { ...(timezone ? { timezone } : {}), paused: true });
    if (crons.size >= MAX_CRONS) crons.delete(crons.keys().next().value as string);
  }
  crons.set(key, cron);
  return cron;
}
