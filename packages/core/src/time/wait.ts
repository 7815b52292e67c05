// Waiting before a retry: how long a server asked for (`retry-after`), and a wait a run's abort
// ends at once. The model requests' retries (runner/retry-stream.ts) and web_search's one retry
// after a 429 (web/web-search.ts) read and wait alike.

/** How long the server asked to wait, from `retry-after-ms` or `retry-after` (seconds or a date). */
export function retryAfterMs(headers: Record<string, string>): number | undefined {
  const ms = Number.parseFloat(headers["retry-after-ms"] ?? "");
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers["retry-after"];
  if (value === undefined) return undefined;
  const seconds = Number.parseFloat(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** Waits `ms`; false as soon as `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      resolve(ok);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
