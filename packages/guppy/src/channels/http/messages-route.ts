import type { LogEntry } from "@guppy/core/state";
import type { Context } from "hono";
import type { HttpBackend } from "./http-backend.js";
import { jsonError } from "./json-error.js";

/** How many messages a page has when `before` comes without `limit`. */
export const DEFAULT_PAGE_LIMIT = 100;
/** The most messages one page gives. */
export const MAX_PAGE_LIMIT = 1000;

/** A log entry as GET /v1/threads/{id}/messages shows it. */
function messageJson(e: LogEntry) {
  return {
    id: e.messageId,
    date: e.date,
    from: e.isBot ? "guppy" : e.userName,
    is_bot: e.isBot,
    text: e.text,
  };
}

/**
 * GET /v1/threads/{id}/messages of a known thread `id`: without `limit` and `before` the whole
 * log, as before paging was added; with them one page, read from the log's end, and
 * `next_before` (the id of its oldest message while older ones exist, else null).
 */
export async function threadMessagesRoute(
  c: Context,
  backend: HttpBackend,
  id: string,
): Promise<Response> {
  const limitText = c.req.query("limit");
  const before = c.req.query("before");
  if (limitText === undefined && before === undefined) {
    return c.json({ thread_id: id, messages: (await backend.log.readAll(id)).map(messageJson) });
  }
  let limit = DEFAULT_PAGE_LIMIT;
  if (limitText !== undefined) {
    if (!/^[1-9][0-9]{0,3}$/.test(limitText) || Number(limitText) > MAX_PAGE_LIMIT) {
      return jsonError(
        c,
        400,
        `\`limit\` must be a whole number from 1 to ${MAX_PAGE_LIMIT}, not ${JSON.stringify(limitText)}.`,
        "invalid_request_error",
      );
    }
    limit = Number(limitText);
  }
  if (before === "") {
    return jsonError(c, 400, "`before` must be a message id, not empty.", "invalid_request_error");
  }
  // Read from the log's end: the newest pages of a log of years cost what they hold.
  const page = await backend.log.readBackward(id, {
    limit,
    ...(before !== undefined ? { before: { messageId: before } } : {}),
  });
  if (page.status === "unknown_before") {
    return jsonError(
      c,
      404,
      `No message ${JSON.stringify(before)} in thread ${id} (\`before\`).`,
      "not_found",
    );
  }
  return c.json({
    thread_id: id,
    messages: page.entries.map(messageJson),
    // The id to pass as `before` for the older page; null when this page starts the log.
    next_before: page.older === null ? null : (page.entries[0]?.messageId ?? null),
  });
}
