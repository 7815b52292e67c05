import { channel } from "node:diagnostics_channel";

/**
 * The header guppy adds to each model request so that the HTTP exchange of that request can be
 * told apart from every other one in the process.
 */
export const REQUEST_ID_HEADER = "x-guppy-request";

/** What the HTTP client saw of one model request. */
export interface ProviderResponse {
  /** Status of the response, once its headers came. */
  status?: number;
  /** Its headers, names in lower case. */
  headers: Record<string, string>;
  /** The request failed at the connection (refused, reset, cut mid-answer). */
  connectionFailed: boolean;
}

/**
 * A failed request's status and headers (`retry-after`) are not given back by pi-ai: it turns a
 * provider error into a message string and drops the response. The provider SDKs send through
 * the global fetch (undici), which publishes every request's response headers and errors on
 * diagnostics channels: the request carries `x-guppy-request: <id>`, and what undici published
 * for that id is kept until the request's caller takes it. Only watched ids are kept.
 */
const watched = new Map<string, ProviderResponse>();
let subscribed = false;

interface UndiciRequestMessage {
  request?: { headers?: unknown };
  response?: { statusCode?: number; headers?: unknown };
}

function subscribe(): void {
  if (subscribed) return;
  subscribed = true;
  channel("undici:request:headers").subscribe((message) => {
    const { request, response } = message as UndiciRequestMessage;
    const entry = lookup(request?.headers);
    if (!entry || !response) return;
    entry.status = response.statusCode;
    entry.headers = headerRecord(response.headers);
  });
  channel("undici:request:error").subscribe((message) => {
    const entry = lookup((message as UndiciRequestMessage).request?.headers);
    if (entry) entry.connectionFailed = true;
  });
}

function lookup(headers: unknown): ProviderResponse | undefined {
  if (watched.size === 0) return undefined;
  const id = headerRecord(headers)[REQUEST_ID_HEADER];
  return id === undefined ? undefined : watched.get(id);
}

/**
 * undici's header lists, whichever form its version publishes: a flat array of names and values
 * (strings or Buffers), an array of pairs, or raw `name: value\r\n` lines.
 */
export function headerRecord(headers: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof headers === "string") {
    for (const line of headers.split("\r\n")) {
      const colon = line.indexOf(":");
      if (colon > 0) out[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    return out;
  }
  if (!Array.isArray(headers)) return out;
  if (headers.every((h) => Array.isArray(h))) {
    for (const [name, value] of headers as unknown[][])
      out[String(name).toLowerCase()] = String(value);
    return out;
  }
  for (let i = 0; i + 1 < headers.length; i += 2) {
    out[String(headers[i]).toLowerCase()] = String(headers[i + 1]);
  }
  return out;
}

/** Starts keeping what undici publishes for requests sent with `id` in REQUEST_ID_HEADER. */
export function watchResponse(id: string): void {
  subscribe();
  watched.set(id, { headers: {}, connectionFailed: false });
}

/** What was seen of request `id` (nothing if it never reached the HTTP client); stops the watch. */
export function takeResponse(id: string): ProviderResponse | undefined {
  const entry = watched.get(id);
  watched.delete(id);
  return entry;
}
