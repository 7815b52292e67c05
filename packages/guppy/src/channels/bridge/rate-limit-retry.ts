/**
 * What a failed platform call means for the next try: wait out a rate limit, try again after a
 * transient failure (5xx, network error, timeout), or stop (the platform refused the request).
 */
export type SendFailure =
  | { kind: "rate-limited"; retryAfterMs: number }
  | { kind: "transient" }
  | { kind: "refused" };

/** Node's and undici's codes for a connection that failed or timed out (worth another try). */
const NETWORK_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "EAI_AGAIN",
  "ENOTFOUND",
  "ENETUNREACH",
  "EHOSTUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
]);

interface ErrorShape {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  retryAfter?: unknown;
  status?: unknown;
  originalError?: unknown;
  cause?: unknown;
}

const shape = (error: unknown): ErrorShape =>
  typeof error === "object" && error !== null ? (error as ErrorShape) : {};

const isNetworkFailure = (error: unknown): boolean => {
  const e = shape(error);
  if (typeof e.code === "string" && NETWORK_CODES.has(e.code)) return true;
  if (e.name === "TypeError" && e.message === "fetch failed") return true;
  return e.cause !== undefined && e.cause !== error && isNetworkFailure(e.cause);
};

/** Discord's 429 body: `{"retry_after": 1.5, ...}` (seconds). */
const discordRetryAfter = (body: unknown): number => {
  try {
    const seconds = (JSON.parse(String(body)) as { retry_after?: unknown }).retry_after;
    return typeof seconds === "number" && seconds >= 0 ? seconds : 1;
  } catch {
    return 1;
  }
};

/**
 * Reads a Chat SDK adapter's error: Telegram's adapter throws `AdapterRateLimitError` for 429,
 * `NetworkError` for 5xx and failed connections and other adapter errors for 4xx; Discord's wraps
 * every HTTP error in a `NetworkError` around a `DiscordApiError` carrying the status, and lets
 * connection failures through as they are; Slack's web client retries 429s, 5xx and network
 * errors itself (for up to half an hour) before anything reaches guppy, so what it throws is final.
 */
export function classifySendError(error: unknown): SendFailure {
  const e = shape(error);
  if (e.name === "AdapterRateLimitError" || e.code === "RATE_LIMITED") {
    const seconds = typeof e.retryAfter === "number" && e.retryAfter >= 0 ? e.retryAfter : 1;
    return { kind: "rate-limited", retryAfterMs: seconds * 1000 };
  }
  const original = shape(e.originalError);
  if (e.name === "NetworkError" && original.name === "DiscordApiError") {
    const status = typeof original.status === "number" ? original.status : 0;
    if (status === 429)
      return { kind: "rate-limited", retryAfterMs: discordRetryAfter(original.message) * 1000 };
    return status >= 500 ? { kind: "transient" } : { kind: "refused" };
  }
  if (e.name === "NetworkError" || isNetworkFailure(error)) return { kind: "transient" };
  return { kind: "refused" };
}

/** Telegram refuses an edit that would not change the message: it already shows that text. */
export function isNotModified(error: unknown): boolean {
  return /message is not modified/i.test(String(shape(error).message ?? ""));
}

export const defaultSleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms));

export interface RetryOptions {
  /** Tries in all, the first included (default 4). */
  attempts?: number;
  sleep?: (ms: number) => Promise<void>;
  /** Longest wait for one 429 (default 2 minutes). */
  maxWaitMs?: number;
  /** Wait before the second try after a transient failure, doubled for each further one (1 s). */
  backoffMs?: number;
}

/**
 * Runs `operation`, waiting out 429s for the `retry_after` the platform gives and trying again
 * after transient failures (1 s, 2 s, 4 s, ...), up to `attempts` tries; a refusal is thrown at once.
 */
export async function withRateLimitRetry<T>(
  operation: () => Promise<T>,
  options: RetryOptions = {},
): Promise<T> {
  const attempts = options.attempts ?? 4;
  const sleep = options.sleep ?? defaultSleep;
  const backoffMs = options.backoffMs ?? 1000;
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation();
    } catch (error) {
      const failure = classifySendError(error);
      if (failure.kind === "refused" || attempt >= attempts) throw error;
      await sleep(
        failure.kind === "rate-limited"
          ? Math.min(failure.retryAfterMs, options.maxWaitMs ?? 120_000)
          : backoffMs * 2 ** (attempt - 1),
      );
    }
  }
}
