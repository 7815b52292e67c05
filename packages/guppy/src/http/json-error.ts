import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";

/** Every error of the HTTP API: `{ "error": { "message", "type" } }` (the OpenAI shape). */
export function jsonError(c: Context, status: ContentfulStatusCode, message: string, type: string) {
  return c.json({ error: { message, type } }, status);
}

/** The request body as JSON, or a 400 response naming what is wrong. */
export async function readJsonBody(
  c: Context,
): Promise<{ ok: true; body: Record<string, unknown> } | { ok: false; response: Response }> {
  let text: string;
  try {
    text = await c.req.text();
  } catch (error) {
    return {
      ok: false,
      response: jsonError(
        c,
        400,
        `Could not read the request body: ${String(error)}`,
        "invalid_request_error",
      ),
    };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return {
      ok: false,
      response: jsonError(
        c,
        400,
        `The request body is not valid JSON: ${(error as Error).message}`,
        "invalid_request_error",
      ),
    };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return {
      ok: false,
      response: jsonError(
        c,
        400,
        "The request body must be a JSON object.",
        "invalid_request_error",
      ),
    };
  }
  return { ok: true, body: value as Record<string, unknown> };
}
