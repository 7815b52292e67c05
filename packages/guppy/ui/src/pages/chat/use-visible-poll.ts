import { useEffect, useRef } from "preact/hooks";

/**
 * Calls `tick` now, then every `ms` while the tab is visible (document.visibilityState), and at
 * once when it becomes visible again: a hidden tab asks the gateway nothing. A tick still under
 * way is not started again.
 */
export function useVisiblePoll(tick: () => Promise<unknown>, ms: number, deps: unknown[]): void {
  const latest = useRef(tick);
  latest.current = tick;
  useEffect(() => {
    let busy = false;
    let stopped = false;
    const run = () => {
      if (busy || stopped || document.visibilityState !== "visible") return;
      busy = true;
      latest.current().finally(() => {
        busy = false;
      });
    };
    run();
    const timer = setInterval(run, ms);
    document.addEventListener("visibilitychange", run);
    return () => {
      stopped = true;
      clearInterval(timer);
      document.removeEventListener("visibilitychange", run);
    };
  }, deps);
}
