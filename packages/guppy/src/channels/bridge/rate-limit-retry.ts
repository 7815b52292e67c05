/** Seconds the platform asked us to wait (Chat SDK's AdapterRateLimitError), if `error` is a 429. */
export function retryAfterSeconds(error: unknown): number | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const e = error as { name?: unknown; code?: unknown; retryAfter?: unknown };
  if (e.name !== "AdapterRateLimitError" && e.code !== "RATE_LIMITED") return undefined;
  return typeof e.retryAfter === "number" && e.retryAfter >= 0 ? e.retryAfter : 1;
}

export const defaultSleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `operation`, waiting out 429s for the `retry_after` the platform gives (up to `attempts`). */
export async function withRateLimitRetry<T>(
  operation: () => Promise<T>,
  options: { attempts?: number; sleep?: (ms: number) => Promise<void>; maxWaitMs?: number } = {},
): Promise<T> {
  const attempts = options.attempts ?? 4;
  const sleep = options.sleep ?? defaultSleep;
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation();
    } catch (error) {
      const seconds = retryAfterSeconds(error);
      if (seconds === undefined || attempt >= attempts) throw error;
      await sleep(Math.min(seconds * 1000, options.maxWaitMs ?? 120_000));
    }
  }
}
