import type { EventFields, EventSpec } from "@guppy/core/events";
import type { Context, Hono } from "hono";
import type { EventDeletedJson, EventJson, EventListJson, EventTargetJson } from "./api-types.js";
import type { ListedEvent } from "./event-calls.js";
import type { HttpBackend } from "./http-backend.js";
import { jsonError } from "./json-error.js";
import { readJsonBody } from "./request-body.js";

/** The body fields of POST and PATCH /v1/events, and the file field each one sets. */
const BODY_FIELDS: Record<string, keyof EventFields | "id"> = {
  id: "id",
  type: "type",
  text: "text",
  schedule: "schedule",
  timezone: "timezone",
  thread: "threadId",
  adapter: "adapterId",
  channel: "channelId",
};

/** A file field's name in a problem, as the body field that sets it: `"threadId"` → `"thread"`. */
function bodyProblem(problem: string): string {
  const names: Record<string, string> = {
    threadId: "thread",
    adapterId: "adapter",
    channelId: "channel",
  };
  return problem.replace(/"(threadId|adapterId|channelId)"/g, (_m, k: string) => `"${names[k]}"`);
}

/** An event as GET /v1/events lists it and the other routes answer (docs/channels.md). */
export function eventJson({ event, nextRun }: ListedEvent): EventJson {
  return {
    id: event.id,
    type: event.type,
    target: targetJson(event),
    text: event.text,
    schedule: event.schedule ?? null,
    ...(event.timezone !== undefined ? { timezone: event.timezone } : {}),
    next_run: nextRun === undefined ? null : new Date(nextRun).toISOString(),
  };
}

function targetJson(event: EventSpec): EventTargetJson {
  return "threadId" in event
    ? { thread: event.threadId }
    : { adapter: event.adapterId, channel: event.channelId };
}

/**
 * The body's fields as the file names them, or the problem: a field not of the API, or a value
 * that is neither a string nor (in an edit, for `schedule` and `timezone`) null.
 */
function bodyFields(
  body: Record<string, unknown>,
  edit: boolean,
): { id?: unknown; fields: EventFields } | string {
  const fields: Record<string, unknown> = {};
  let id: unknown;
  for (const [key, value] of Object.entries(body)) {
    const field = BODY_FIELDS[key];
    if (field === undefined) {
      return `unknown field "${key}" (fields: ${Object.keys(BODY_FIELDS).join(", ")})`;
    }
    const removable = edit && (key === "schedule" || key === "timezone");
    if (typeof value !== "string" && !(removable && value === null)) {
      return `"${key}" must be a string${removable ? " or null" : ""}`;
    }
    if (field === "id") id = value;
    else fields[field] = value;
  }
  return { id, fields: fields as EventFields };
}

const badRequest = (c: Context, message: string) =>
  jsonError(c, 400, message, "invalid_request_error");

const unknownEvent = (c: Context, id: string) =>
  jsonError(c, 404, `Unknown event ${JSON.stringify(id)}.`, "not_found");

const unavailable = (c: Context) =>
  jsonError(c, 503, "This gateway has no scheduled events.", "unavailable");

/**
 * GET/POST /v1/events, PATCH/DELETE /v1/events/{id}: the files of `<home>/events/`, read and
 * written as `guppy events` does (the same validation and messages, by body field name); the
 * gateway's watcher picks a change up as it does the CLI's.
 */
export function addEventsRoutes(app: Hono, backend: HttpBackend): void {
  app.get("/v1/events", async (c) => {
    const listing = await backend.listEvents();
    if (!listing) return unavailable(c);
    return c.json({ events: listing.events.map(eventJson) } satisfies EventListJson);
  });

  app.post("/v1/events", async (c) => {
    const read = await readJsonBody(c);
    if (!read.ok) return read.response;
    const given = bodyFields(read.body, false);
    if (typeof given === "string") return badRequest(c, given);
    const result = await backend.changeEvent({
      action: "add",
      ...(given.id !== undefined ? { id: given.id as string } : {}),
      fields: given.fields,
    });
    if (result.ok) return c.json(eventJson(result), 201);
    if (result.reason === "exists")
      return jsonError(c, 409, bodyProblem(result.problem), "conflict");
    if (result.reason === "unavailable") return unavailable(c);
    return badRequest(c, bodyProblem(result.problem));
  });

  app.patch("/v1/events/:id", async (c) => {
    const id = c.req.param("id");
    const read = await readJsonBody(c);
    if (!read.ok) return read.response;
    const given = bodyFields(read.body, true);
    if (typeof given === "string") return badRequest(c, given);
    if (given.id !== undefined && given.id !== id) {
      return badRequest(c, `"id" cannot change (delete the event and create it again)`);
    }
    const result = await backend.changeEvent({ action: "edit", id, fields: given.fields });
    if (result.ok) return c.json(eventJson(result));
    if (result.reason === "unknown") return unknownEvent(c, id);
    if (result.reason === "unavailable") return unavailable(c);
    return badRequest(c, bodyProblem(result.problem));
  });

  app.delete("/v1/events/:id", async (c) => {
    const id = c.req.param("id");
    if (!(await backend.removeEvent(id))) return unknownEvent(c, id);
    return c.json({ status: "deleted", id } satisfies EventDeletedJson);
  });
}
