import { readTextNoFollow } from "../fs/no-follow.js";
import { type EventSpec, parseEventFile, validateEvent, validEventId } from "./event-file.js";
import { eventKind } from "./event-kinds.js";
import {
  eventExists,
  eventPath,
  newEventId,
  removeEventFile,
  writeEventFile,
} from "./event-store.js";

/**
 * An event's fields as a caller gives them before validation (`guppy events add`'s flags, the
 * HTTP API's body): strings, unchecked. `null` in an edit removes an optional field.
 */
export interface EventFields {
  type?: unknown;
  text?: unknown;
  schedule?: unknown;
  timezone?: unknown;
  threadId?: unknown;
  adapterId?: unknown;
  channelId?: unknown;
}

/**
 * What adding or editing an event did: the event as written, or why not — `invalid` (a field's
 * problem, naming it as the file does: `"schedule"`, `"threadId"`, `"id"`), `exists` (add with a
 * taken id) or `unknown` (edit of no such event). Callers rename the fields to their own words.
 */
export type EventChange =
  | { ok: true; event: EventSpec }
  | { ok: false; reason: "invalid" | "exists" | "unknown"; problem: string };

/**
 * Validates and writes a new event file (`guppy events add`, POST /v1/events): one set of rules
 * and messages for both. Without `id`, a fresh `<type>-xxxxxx`.
 */
export function addEvent(dir: string, id: string | undefined, fields: EventFields): EventChange {
  if (id !== undefined && !validEventId(id)) {
    return invalid(`"id" "${id}": use letters, digits, "-", "_" or "." (not first)`);
  }
  if (id !== undefined && eventExists(dir, id)) {
    return { ok: false, reason: "exists", problem: `"id" "${id}": an event with that id exists` };
  }
  const type = typeof fields.type === "string" ? fields.type : "event";
  const parsed = validateEvent(id ?? newEventId(dir, type), definedFields(fields));
  if (!parsed.ok) return invalid(parsed.problem);
  writeEventFile(dir, parsed.event);
  return { ok: true, event: parsed.event };
}

/**
 * Changes an event file's fields (PATCH /v1/events/{id}): the given ones replace the file's, a
 * new target replaces the old one whole, `null` removes `schedule` or `timezone`. The file is
 * rewritten whole, so the gateway's watcher reads the edit as it reads a new file.
 */
export function editEvent(dir: string, id: string, fields: EventFields): EventChange {
  const current = readEvent(dir, id);
  if (!current) return { ok: false, reason: "unknown", problem: `no event "${id}"` };
  const { id: _id, ...old } = current;
  const retarget =
    fields.threadId !== undefined ||
    fields.adapterId !== undefined ||
    fields.channelId !== undefined;
  const base: Record<string, unknown> = { ...old };
  if (retarget) {
    delete base.threadId;
    delete base.adapterId;
    delete base.channelId;
  }
  // An immediate event takes no schedule: a change to immediate drops the old one.
  const takesNone = typeof fields.type === "string" && eventKind(fields.type)?.schedule === "none";
  if (takesNone && fields.schedule === undefined) delete base.schedule;
  const merged: Record<string, unknown> = { ...base, ...definedFields(fields) };
  for (const key of Object.keys(merged)) if (merged[key] === null) delete merged[key];
  const parsed = validateEvent(id, merged);
  if (!parsed.ok) return invalid(parsed.problem);
  writeEventFile(dir, parsed.event);
  return { ok: true, event: parsed.event };
}

/** Removes an event's file (`guppy events rm`, DELETE /v1/events/{id}); false if none. */
export function deleteEvent(dir: string, id: string): boolean {
  return validEventId(id) && removeEventFile(dir, id);
}

/** One event file, read and valid; undefined if there is none (or it does not read). */
export function readEvent(dir: string, id: string): EventSpec | undefined {
  if (!validEventId(id)) return undefined;
  let text: string;
  try {
    text = readTextNoFollow(dir, eventPath(dir, id));
  } catch {
    return undefined;
  }
  const parsed = parseEventFile(id, text);
  return parsed.ok ? parsed.event : undefined;
}

function invalid(problem: string): EventChange {
  return { ok: false, reason: "invalid", problem };
}

/** The fields that were given (an `undefined` is not a field: validateEvent would name it). */
function definedFields(fields: EventFields): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) out[key] = value;
  return out;
}
