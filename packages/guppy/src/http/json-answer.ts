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

/** The same answer as a Hono response (`c.json`), for a route that returns one. */
export function honoJsonAnswer(c: Context, answer: JsonAnswer): Response {
  for (const [name, value] of Object.entries(answer.headers ?? {})) c.header(name, value);
  return c.json(answer.body, answer.status);
}
