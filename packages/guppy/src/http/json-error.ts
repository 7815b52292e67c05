import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";

/** Every error of the HTTP API: `{ "error": { "message", "type" } }` (the OpenAI shape). */
export function jsonError(c: Context, status: ContentfulStatusCode, message: string, type: string) {
  return c.json({ error: { message, type } }, status);
}
