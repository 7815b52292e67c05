import { Cron } from "croner";

/**
 * The most recently used croner jobs, by schedule and zone. A job is ~80 kB of heap (croner
 * keeps a table of 10,000 years per pattern), so they are few: 10,000 events with as many
 * schedules must not keep 10,000 jobs. Paused jobs: croner sets no timer for them; the bus keeps
 * one timer for the earliest slot of all events.
 */
const crons = new Map<string, Cron>();
const MAX_CRONS = 4;

/**
 * What croner said of each schedule and zone already checked (a problem, or "" for none), and
 * the last slot worked out for each (after which second): events sharing a schedule are read and
 * scheduled without making a job each — at start, 10,000 of them in a few hundred ms.
 */
const checked = new Map<string, string>();
const lastSlots = new Map<string, { afterSecond: number; next: number | undefined }>();
const MAX_MEMO = 8192;

const keyOf = (schedule: string, timezone: string | undefined) =>
  `${timezone ?? ""}\u0000${schedule}`;

function remember<V>(map: Map<string, V>, key: string, value: V): void {
  if (map.size >= MAX_MEMO) map.clear();
  map.set(key, value);
}

/** A paused croner job for `schedule` in `timezone` (throws croner's error for a bad pattern). */
function cronFor(key: string, schedule: string, timezone: string | undefined): Cron {
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

/** Croner's objection to `schedule` in `timezone`, without its "CronPattern: " prefix; none if valid. */
export function cronProblem(schedule: string, timezone: string | undefined): string | undefined {
  const key = keyOf(schedule, timezone);
  let problem = checked.get(key);
  if (problem === undefined) {
    try {
      cronFor(key, schedule, timezone);
      problem = "";
    } catch (error) {
      problem = (error as Error).message.replace(/^CronPattern: /, "");
    }
    remember(checked, key, problem);
  }
  return problem === "" ? undefined : problem;
}

/**
 * The first time (epoch ms) `schedule` matches strictly after `after`. Croner works to the
 * second, so the answer is the same for any `after` within one second: kept per schedule.
 */
export function cronNext(
  schedule: string,
  timezone: string | undefined,
  after: number,
): number | undefined {
  const key = keyOf(schedule, timezone);
  const afterSecond = Math.floor(after / 1000);
  const last = lastSlots.get(key);
  if (last && last.afterSecond === afterSecond) return last.next;
  const next = cronFor(key, schedule, timezone).nextRun(new Date(after))?.getTime();
  remember(lastSlots, key, { afterSecond, next });
  return next;
}
