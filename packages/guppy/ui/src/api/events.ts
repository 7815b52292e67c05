import type {
  EventBody,
  EventDeletedJson,
  EventJson,
  EventListJson,
} from "../../../src/channels/http/api-types.js";
import { del, get, patch, post, seg } from "./client.js";

// The scheduled-event routes (docs/channels.md "HTTP API"): GET/POST /v1/events and
// PATCH/DELETE /v1/events/{id} — the files of `<home>/events/`, as `guppy events` reads them.
// The JSON's types are the routes' (api-types.ts); the kinds are core's table.

export {
  type EventType,
  type ScheduledEventType,
  scheduleForm,
} from "@guppy/core/event-kinds";
export type {
  EventBody,
  EventJson,
  EventTargetJson,
} from "../../../src/channels/http/api-types.js";

export const listEvents = () => get<EventListJson>("/v1/events");
export const createEvent = (body: EventBody) => post<EventJson>("/v1/events", body);
export const editEvent = (id: string, body: EventBody) =>
  patch<EventJson>(`/v1/events/${seg(id)}`, body);
export const cancelEvent = (id: string) => del<EventDeletedJson>(`/v1/events/${seg(id)}`);
