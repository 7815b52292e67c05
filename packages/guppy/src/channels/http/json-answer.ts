import type { ServerResponse } from "node:http";
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";

/** An answer with a JSON body as it goes out: status, body and extra headers. */
export interface JsonAnswer {
  status: ContentfulStatusCode;
  body: unknown;
  headers?: Record<string, string>;
}

/**
 * Writes an answer straight to a node response, with the headers Hono's `c.json` gives it
 * (nothing when the client is gone).
 */
export function writeJsonAnswer(res: ServerResponse, answer: JsonAnswer): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(answer.body);
  res.writeHead(answer.status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...answer.headers,
  });
  res.end(text);
}

/** Sets `headers` on the Hono response under way. */
export function setHeaders(c: Context, headers: Record<string, string> = {}): void {
  for (const [name, value] of Object.entries(headers)) c.header(name, value);
}

/** The same answer as a Hono response (`c.json`), for a route that returns one. */
export function honoJsonAnswer(c: Context, answer: JsonAnswer): Response {
  setHeaders(c, answer.headers);
  return c.json(answer.body, answer.status);
}
