import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { honoJsonAnswer, type JsonAnswer } from "./json-answer.js";

/** Every error of the HTTP API: `{ "error": { "message", "type" } }` (the OpenAI shape). */
export function errorAnswer(status: ContentfulStatusCode, message: string, type: string) {
  return { status, body: { error: { message, type } } } satisfies JsonAnswer;
}

/** What an unexpected failure of a route answers (Hono's onError, or a reply written later). */
export function internalErrorAnswer(error: unknown): JsonAnswer {
  const message = error instanceof Error ? error.message : String(error);
  return errorAnswer(500, `Internal error: ${message}`, "internal_error");
}

export function jsonError(c: Context, status: ContentfulStatusCode, message: string, type: string) {
  return honoJsonAnswer(c, errorAnswer(status, message, type));
}
