import { setTimeout as delay } from "node:timers/promises";

/** One session of the Gateway listener ended before its planned duration (stop() not called). */
export interface EarlyEnd {
  /** What the session threw; undefined when it returned (the adapter catches a failed login). */
  error: unknown;
  /** How long the session ran. */
  lastedMs: number;
  /** How long the loop now waits before the next session. */
  delayMs: number;
}

export interface KeepGatewayOpenOptions {
  /** Runs one listener session until its planned duration has passed or `signal` aborts. */
  session: (signal: AbortSignal) => Promise<unknown>;
  /** How long one session is meant to run; one that ends sooner is retried after a delay. */
  sessionMs: number;
  signal: AbortSignal;
  /** Told of each early end before the wait (the channel logs it); awaited. */
  onEarlyEnd: (end: EarlyEnd) => void | Promise<void>;
  /** First wait after an early end; it doubles with each early end in a row. Default 5 s. */
  initialDelayMs?: number;
  /** Longest wait. Default 5 min. */
  maxDelayMs?: number;
  /** A session that ran this long was healthy: the next wait starts again at the first. Default 10 min. */
  healthyMs?: number;
  now?: () => number;
  /** Waits `ms` or until `signal` aborts, whichever comes first. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** Resolves after `ms`, or at once when `signal` aborts (node's timer, cleared then; unref'd). */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return delay(ms, undefined, { signal, ref: false }).catch(() => {});
}

/**
 * Keeps the Discord Gateway listener running until `signal` aborts, one session after another. A
 * session that ends early — returned or threw — is followed by a wait (5 s doubling to 5 min,
 * back to 5 s after a healthy session), so a login Discord refuses never turns into a loop of
 * logins: Discord bans an IP that sends too many invalid requests.
 */
export async function keepGatewayOpen(options: KeepGatewayOpenOptions): Promise<void> {
  const { session, sessionMs, signal, onEarlyEnd } = options;
  const initialDelayMs = options.initialDelayMs ?? 5_000;
  const maxDelayMs = options.maxDelayMs ?? 5 * 60_000;
  const healthyMs = options.healthyMs ?? 10 * 60_000;
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? abortableSleep;
  let delayMs = initialDelayMs;
  while (!signal.aborted) {
    const started = now();
    let error: unknown;
    try {
      await session(signal);
    } catch (e) {
      error = e;
    }
    if (signal.aborted) return;
    const lastedMs = now() - started;
    if (lastedMs >= healthyMs) delayMs = initialDelayMs;
    // A timer may fire a little early by the wall clock: a session within a second of its
    // planned duration ran it.
    if (error === undefined && lastedMs >= sessionMs - 1000) continue;
    try {
      await onEarlyEnd({ error, lastedMs, delayMs });
    } catch {
      // Only a report: the wait and the next session come all the same.
    }
    await sleep(delayMs, signal);
    delayMs = Math.min(delayMs * 2, maxDelayMs);
  }
}
