import { useEffect, useRef } from "preact/hooks";

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
