import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { errorText } from "../api/client.js";

export interface Polled<T> {
  /** The last answer that came; kept while a later refresh fails. */
  data: T | undefined;
  /** The last refresh's failure, one line; cleared by the next success. */
  error: string | undefined;
  /** Loads now (after an action), whatever the timer. */
  refresh: () => Promise<void>;
}

/**
 * `load` now and every `intervalMs` while the tab is visible (a hidden tab asks nothing; showing
 * it again loads at once), one call at a time: the Status and Access pages follow the gateway
 * without a reload — a new pairing request appears by itself.
 */
export function usePollWhileVisible<T>(load: () => Promise<T>, intervalMs = 5000): Polled<T> {
  const [data, setData] = useState<T | undefined>();
  const [error, setError] = useState<string | undefined>();
  const loadRef = useRef(load);
  loadRef.current = load;
  const inFlight = useRef<Promise<void> | undefined>(undefined);
  const alive = useRef(true);

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

  useEffect(() => {
    alive.current = true;
    void tick();
    const timer = setInterval(() => {
      if (document.visibilityState === "visible") void tick();
    }, intervalMs);
    const onVisible = () => {
      if (document.visibilityState === "visible") void tick();
    };
    document.addEventListener("visibilitychange", onVisible);
    return () => {
      alive.current = false;
      clearInterval(timer);
      document.removeEventListener("visibilitychange", onVisible);
    };
  }, [tick, intervalMs]);

  return { data, error, refresh };
}
