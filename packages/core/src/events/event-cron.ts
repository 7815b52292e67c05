import { Cron } from "croner";

/**
 * Croner jobs are costly to make and to keep: each parse allocates a table of 10,000 years
 * (~80 kB). How they are kept decided the gateway's memory with 10,000 events more than the
 * events themselves did: an LRU of a few jobs, read through 10,000 distinct schedules, kept each
 * job alive just long enough to live through a young-generation collection or two, which made V8
 * grow its young generation to the maximum (2 × 16 MB) and move the year tables to the old one
 * — tens of MB of RSS that an idle gateway never gave back. So no job is kept but `recent`, the
 * one made last, for the very next call (an event file is validated, then scheduled), and it is
 * let go before the next one is made: at the collection that making may trigger, it is garbage.
 * Paused: croner sets no timer (the bus keeps one timer for all events).
 */
let recent: { key: string; cron: Cron } | undefined;

/**
 * What is kept instead, per schedule and zone: the last answer, a few numbers. The first slot
 * after `after` is `next`; so it is for any time from `after` up to (not including) `next` —
 * 10,000 events on 24 schedules, or a schedule that comes back after each firing, are worked out
 * without parsing again. A key here is a pattern croner took (a bad one throws, and is not kept).
 */
interface Answer {
  after: number;
  next: number | undefined;
}
const answers = new Map<string, Answer>();
/** A few hundred kB at most; when full it starts over (10,000 distinct schedules: no answer is met twice). */
const MAX_ANSWERS = 2048;

const keyOf = (schedule: string, timezone: string | undefined) =>
  `${timezone ?? ""}\u0000${schedule}`;

/** A paused croner job for `schedule` in `timezone` (throws croner's error for a bad pattern). */
function cronFor(key: string, schedule: string, timezone: string | undefined): Cron {
  if (recent?.key === key) return recent.cron;
  recent = undefined;
  // Options as a plain literal, not a spread: with `{ ...zone, paused }`, each job's garbage was
  // promoted to the old generation (~3.5 kB an event, measured: 10,000 parses left 40 MB of
  // old space to collect instead of none).
  const cron = new Cron(schedule, timezone ? { timezone, paused: true } : { paused: true });
  recent = { key, cron };
  return cron;
}

/** Croner's objection to `schedule` in `timezone`, without its "CronPattern: " prefix; none if valid. */
export function cronProblem(schedule: string, timezone: string | undefined): string | undefined {
  const key = keyOf(schedule, timezone);
  if (answers.has(key)) return undefined;
  try {
    cronFor(key, schedule, timezone);
    return undefined;
  } catch (error) {
    return (error as Error).message.replace(/^CronPattern: /, "");
  }
}

/** The first time (epoch ms) `schedule` matches strictly after `after`. */
export function cronNext(
  schedule: string,
  timezone: string | undefined,
  after: number,
): number | undefined {
  const key = keyOf(schedule, timezone);
  const known = answers.get(key);
  if (known && after >= known.after && (known.next === undefined || after < known.next)) {
    return known.next;
  }
  const next = cronFor(key, schedule, timezone).nextRun(new Date(after))?.getTime();
  if (known) {
    known.after = after;
    known.next = next;
  } else {
    if (answers.size >= MAX_ANSWERS) answers.clear();
    answers.set(key, { after, next });
  }
  return next;
}
