import { readFileSync } from "node:fs";

/**
 * How the process's file descriptors are shared out, so that a burst of clients cannot take the
 * descriptors an accepted run needs: half the open-files limit for the append files the store
 * keeps open (`appendFileBound`), a fixed reserve for everything else (the event loop, the log,
 * the inbox journal, provider connections, tools' pipes) and the rest for HTTP connections
 * (`connectionBudget`). Past the connection budget the HTTP API answers 503 with `retry-after`
 * before reading a request; an open that still meets EMFILE waits (`retryOnDescriptorShortage`).
 *
 * The limit is read from /proc/self/limits, not asked of the shell: Node raises its soft limit to
 * the hard one at start, so `ulimit -n` is not what the process has.
 */

/** The text of /proc/self/limits, or undefined where there is none. */
export function readProcessLimits(): string | undefined {
  try {
    return readFileSync("/proc/self/limits", "utf8");
  } catch {
    return undefined;
  }
}

/**
 * The soft open-files limit in `limits` (the text of /proc/self/limits, `readProcessLimits()`): a
 * number, Infinity for "unlimited", undefined when it cannot be told.
 */
export function openFilesLimit(limits: string | undefined): number | undefined {
  const soft = limits && /^Max open files\s+(\d+|unlimited)/m.exec(limits)?.[1];
  if (!soft) return undefined;
  return soft === "unlimited" ? Number.POSITIVE_INFINITY : Number(soft);
}

/**
 * How many append files to keep open: half the open-files limit, at most 8,192 (two per active
 * thread: 4,096 threads), at least 64. 2,048 when the limit is unknown (no /proc).
 */
export function appendFileBound(limit: number | undefined): number {
  if (limit === undefined) return 2048;
  return Math.max(64, Math.min(8192, Math.floor(limit / 2)));
}

/**
 * Descriptors kept for what is neither an append file nor an HTTP connection. `guppy serve` holds
 * ~30 at rest (event loops, worker, pipes, gateway.log, inbox.jsonl); each running agent adds a
 * provider connection and, while a command runs, its pipes (GUPPY_MAX_CONCURRENT of them at once,
 * 8 by default); atomic writes and reads open one more for a moment.
 */
export const OTHER_DESCRIPTORS = 96;

export interface ConnectionBudget {
  /** Open connections up to which a new one is served. */
  admit: number;
  /**
   * Open connections up to which a new one past `admit` is answered 503 and closed once the
   * client has read it; past this, it is answered and closed at once (its descriptor is needed).
   */
  shed: number;
}

/**
 * The HTTP API's share of `limit`: what the append files and the reserve leave, at least 16.
 * Unbounded (Infinity) when the limit is unknown or unlimited.
 */
export function connectionBudget(limit: number | undefined): ConnectionBudget {
  if (limit === undefined || !Number.isFinite(limit)) {
    return { admit: Number.POSITIVE_INFINITY, shed: Number.POSITIVE_INFINITY };
  }
  const admit = Math.max(16, limit - appendFileBound(limit) - OTHER_DESCRIPTORS);
  return { admit, shed: admit + Math.floor(OTHER_DESCRIPTORS / 3) };
}

/** Whether `error` says the process (EMFILE) or the system (ENFILE) is out of descriptors. */
export function isDescriptorShortage(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === "EMFILE" || code === "ENFILE";
}

/** How long an open waits for descriptors in all before its EMFILE is let through. */
export const DESCRIPTOR_WAIT_MS = 60_000;

/**
 * Runs `open` and, while it fails for want of descriptors, calls `free` (close what can be
 * closed) and tries again after a growing pause (10 ms doubling to 1 s), for up to `waitMs` in
 * all. A run that was accepted waits for descriptors rather than failing: they come back as
 * connections and idle threads close.
 */
export async function retryOnDescriptorShortage<T>(
  open: () => Promise<T>,
  options: { free?: () => void; waitMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + (options.waitMs ?? DESCRIPTOR_WAIT_MS);
  let pause = 10;
  for (;;) {
    try {
      return await open();
    } catch (error) {
      if (!isDescriptorShortage(error) || Date.now() + pause > deadline) throw error;
      options.free?.();
      await new Promise((resolve) => setTimeout(resolve, pause));
      pause = Math.min(1000, pause * 2);
    }
  }
}
