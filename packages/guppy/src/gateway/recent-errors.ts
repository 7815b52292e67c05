/** A warning or error the gateway logged, as GET /v1/status's `recent_errors` lists it. */
export interface LoggedProblem {
  /** ISO time it was logged. */
  time: string;
  level: "warn" | "error";
  /** The line as the terminal shows it (without its time): one line, secrets redacted. */
  message: string;
}

export interface RecentErrors {
  add(level: LoggedProblem["level"], message: string): void;
  /** The newest `limit` entries (the ring's capacity by default), oldest first. */
  list(): LoggedProblem[];
}

/** How many GET /v1/status keeps: enough to see what went wrong lately, small in memory. */
export const RECENT_ERRORS = 20;

/** Longest message kept: a stack trace or a provider's HTML error page is cut. */
const MAX_CHARS = 500;

/**
 * The last warnings and errors of the gateway's log, kept in memory (a ring of `capacity`) so the
 * status page can show them without reading back a log file that may be gigabytes long.
 */
export function createRecentErrors(
  capacity = RECENT_ERRORS,
  now: () => Date = () => new Date(),
): RecentErrors {
  const ring: LoggedProblem[] = [];
  let next = 0;
  return {
    add(level, message) {
      const line = message.replace(/\s+/g, " ").trim();
      const entry: LoggedProblem = {
        time: now().toISOString(),
        level,
        message: line.length > MAX_CHARS ? `${line.slice(0, MAX_CHARS - 1)}…` : line,
      };
      if (ring.length < capacity) ring.push(entry);
      else ring[next] = entry;
      next = (next + 1) % capacity;
    },
    list() {
      return ring.length < capacity ? [...ring] : [...ring.slice(next), ...ring.slice(0, next)];
    },
  };
}
