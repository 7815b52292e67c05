import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { errorText } from "./api/client.js";

/**
 * Calls `tick` now, then again `ms` after each call ends — or four times as long as the call
 * took, if more, so a slow answer (a listing of thousands of threads on a busy gateway) never
 * takes more than a fifth of the gateway's time — while the tab is visible
 * (document.visibilityState); at once when it becomes visible again. A hidden tab asks nothing.
 */
export function useVisiblePoll(tick: () => Promise<unknown>, ms: number, deps: unknown[]): void {
  const latest = useRef(tick);
  latest.current = tick;
  useEffect(() => {
    let busy = false;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = () => {
      clearTimeout(timer);
      timer = undefined;
      if (busy || stopped || document.visibilityState !== "visible") return;
      busy = true;
      const started = performance.now();
      latest.current().finally(() => {
        busy = false;
        if (stopped) return;
        timer = setTimeout(run, Math.max(ms, 4 * (performance.now() - started)));
      });
    };
    run();
    document.addEventListener("visibilitychange", run);
    return () => {
      stopped = true;
      clearTimeout(timer);
      document.removeEventListener("visibilitychange", run);
    };
  }, deps);
}

export interface Polled<T> {
  /** The last answer that came; kept while a later refresh fails. */
  data: T | undefined;
  /** The last refresh's failure, one line; cleared by the next success. */
  error: string | undefined;
  /** Loads now (after an action), whatever the timer. */
  refresh: () => Promise<void>;
}

/**
 * `load` polled as `useVisiblePoll` does, one call at a time, its last answer and failure kept:
 * the Status and Access pages follow the gateway without a reload — a new pairing request
 * appears by itself.
 */
export function usePollWhileVisible<T>(load: () => Promise<T>, intervalMs = 5000): Polled<T> {
  const [data, setData] = useState<T | undefined>();
  const [error, setError] = useState<string | undefined>();
  const loadRef = useRef(load);
  loadRef.current = load;
  const inFlight = useRef<Promise<void> | undefined>(undefined);
  const alive = useRef(true);
  useEffect(() => {
    alive.current = true;
    return () => {
      alive.current = false;
    };
  }, []);

  /** A timer's load: none while one is under way. */
  const tick = useCallback((): Promise<void> => {
    if (inFlight.current) return inFlight.current;
    const run = loadRef.current().then(
      (value) => {
        if (!alive.current) return;
        setData(value);
        setError(undefined);
      },
      (e) => {
        if (alive.current) setError(errorText(e));
      },
    );
    inFlight.current = run.finally(() => {
      inFlight.current = undefined;
    });
    return inFlight.current;
  }, []);
  /** After a change: a load under way may have started before it, so another one follows. */
  const refresh = useCallback(
    (): Promise<void> => (inFlight.current ? inFlight.current.then(tick) : tick()),
    [tick],
  );
  useVisiblePoll(tick, intervalMs, [tick, intervalMs]);
  return { data, error, refresh };
}
