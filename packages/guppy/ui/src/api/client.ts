// The page's one way to the HTTP API (docs/channels.md): same-origin paths under /v1/ only, the
// session cookie sent by the browser, and the CSRF header on every call (browser-session.ts).
// No URL part (query or fragment) can point it elsewhere: paths are built here from constants.

/** An API answer that was not 2xx: its status and the `error` the API gave. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

let sessionLost: (() => void) | undefined;

/** Called when a call is refused for want of a session (the cookie expired or the token changed). */
export function onSessionLost(listener: () => void): void {
  sessionLost = listener;
}

/** A path segment, encoded (a thread id such as `telegram:123` keeps its meaning). */
export const seg = (value: string) => encodeURIComponent(value);

/** Query string from defined values, with its `?`; empty when none. */
export function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : "";
}

export async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  if (!path.startsWith("/v1/")) throw new Error(`not an API path: ${path}`);
  const headers: Record<string, string> = { "x-guppy-csrf": "1" };
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(path, {
    method,
    headers,
    credentials: "same-origin",
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (!response.ok) {
    const error = (json as { error?: { message?: string; type?: string } } | undefined)?.error;
    if (response.status === 401 && !path.startsWith("/v1/session")) sessionLost?.();
    throw new ApiError(
      response.status,
      error?.type ?? "http_error",
      error?.message ?? `${method} ${path}: HTTP ${response.status}`,
    );
  }
  return json as T;
}

/** GETs started before the code that wants them has loaded (see `prefetch`), by path. */
const early = new Map<string, { answer: Promise<unknown>; at: number }>();
/** How old an early answer may be when it is taken. */
const EARLY_MS = 5_000;

/**
 * Starts GET `path` now, for a page whose code is still loading: its first `get` of the same
 * path takes this answer instead of asking again (once, and only while it is fresh).
 */
export function prefetch(path: string): void {
  const answer = request<unknown>("GET", path);
  answer.catch(() => undefined);
  early.set(path, { answer, at: Date.now() });
}

export const get = <T>(path: string): Promise<T> => {
  const found = early.get(path);
  if (found) {
    early.delete(path);
    if (Date.now() - found.at < EARLY_MS) return found.answer as Promise<T>;
  }
  return request<T>("GET", path);
};
export const post = <T>(path: string, body?: unknown) => request<T>("POST", path, body ?? {});
export const patch = <T>(path: string, body: unknown) => request<T>("PATCH", path, body);
export const del = <T>(path: string) => request<T>("DELETE", path);

/** The message of any failure, for a line on the page. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
