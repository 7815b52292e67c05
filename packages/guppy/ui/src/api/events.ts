import type { EventType } from "../../../../core/src/events/event-kinds.js";
import { del, get, patch, post, seg } from "./client.js";

// The scheduled-event routes (docs/channels.md "HTTP API"): GET/POST /v1/events and
// PATCH/DELETE /v1/events/{id} — the files of `<home>/events/`, as `guppy events` reads them.

// The kinds are core's table (a file that imports nothing, so it bundles into the UI).
export type {
  EventType,
  ScheduledEventType,
} from "../../../../core/src/events/event-kinds.js";

/** Where an event's text goes: an existing thread, or a new thread opened in a channel. */
export type EventTargetJson = { thread: string } | { adapter: string; channel: string };

/** An event as GET /v1/events lists it (and POST/PATCH answer it). */
export interface EventJson {
  id: string;
  type: EventType;
  target: EventTargetJson;
  text: string;
  /** ISO time (one-shot), cron expression (periodic), null (immediate). */
  schedule: string | null;
  /** The IANA zone the schedule is read in; absent: the gateway's (GUPPY_TIMEZONE). */
  timezone?: string;
  /** ISO 8601 in UTC; null when the event never fires again. */
  next_run: string | null;
}

/**
 * The body of POST /v1/events and PATCH /v1/events/{id}: fields the API names; in an edit, the
 * given ones replace the file's and `null` removes `schedule` or `timezone`.
 */
export interface EventBody {
  id?: string;
  type?: EventType;
  text?: string;
  schedule?: string | null;
  timezone?: string | null;
  thread?: string;
  adapter?: string;
  channel?: string;
}

export const listEvents = () => get<{ events: EventJson[] }>("/v1/events");
export const createEvent = (body: EventBody) => post<EventJson>("/v1/events", body);
export const editEvent = (id: string, body: EventBody) =>
  patch<EventJson>(`/v1/events/${seg(id)}`, body);
export const cancelEvent = (id: string) =>
  del<{ status: "deleted"; id: string }>(`/v1/events/${seg(id)}`);
