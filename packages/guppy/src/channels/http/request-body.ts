import type { Context, MiddlewareHandler } from "hono";
import { jsonError } from "./json-error.js";

/** Request bodies over this are refused with 413. */
export const MAX_BODY_BYTES = 1024 * 1024;

const tooLarge = (c: Context) =>
  jsonError(
    c,
    413,
    `The request body is larger than ${MAX_BODY_BYTES} bytes.`,
    "payload_too_large",
  );

/**
 * Refuses a declared Content-Length over the limit before anything is read. Unlike hono's
 * bodyLimit it does not touch `c.req.raw.body`, which would build a web Request and stream for
 * every request; a body without a length (chunked) is counted as `readJsonBody` reads it.
 */
export const bodyLimit: MiddlewareHandler = async (c, next) => {
  const declared = c.req.header("content-length");
  if (declared !== undefined && Number(declared) > MAX_BODY_BYTES) return tooLarge(c);
  await next();
};

/**
 * The request body as a JSON object, or a 4xx response naming what is wrong. `optional`: a route
 * whose body may be left out (POST …/abort) takes an empty one as `{}`.
 */
export async function readJsonBody(
  c: Context,
  options: { optional?: boolean } = {},
): Promise<{ ok: true; body: Record<string, unknown> } | { ok: false; response: Response }> {
  const invalid = (message: string) => ({
    ok: false as const,
    response: jsonError(c, 400, message, "invalid_request_error"),
  });
  let text: string | undefined;
  try {
    // With a Content-Length (checked by bodyLimit) the adapter reads the socket directly.
    text =
      c.req.header("content-length") !== undefined
        ? await c.req.text()
        : await readCapped(c.req.raw.body);
  } catch (error) {
    return invalid(`Could not read the request body: ${String(error)}`);
  }
  if (text === undefined) return { ok: false, response: tooLarge(c) };
  if (options.optional && text.trim() === "") return { ok: true, body: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return invalid(`The request body is not valid JSON: ${(error as Error).message}`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return invalid("The request body must be a JSON object.");
  }
  return { ok: true, body: value as Record<string, unknown> };
}

/** A body of unknown length as text, or undefined once it passes the limit (reading stops). */
async function readCapped(body: ReadableStream<Uint8Array> | null): Promise<string | undefined> {
  if (!body) return "";
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}
