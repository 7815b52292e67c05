import {
  addEvent,
  deleteEvent,
  type EventChange,
  type EventFields,
  type EventSpec,
  editEvent,
  nextRun,
  readEventFiles,
} from "@guppy/core/events";

/** Where the event files are and the zone their schedules default to (GUPPY_TIMEZONE). */
export interface EventFilesConfig {
  dir: string;
  timezone?: string;
}

/** An event and when it fires next (epoch ms; undefined: never). */
export interface ListedEvent {
  event: EventSpec;
  nextRun?: number;
}

export interface EventListing {
  events: ListedEvent[];
}

/** Add (`id` optional) or edit (`id` given) an event, with its fields as files name them. */
export type EventRequest =
  | { action: "add"; id?: string; fields: EventFields }
  | { action: "edit"; id: string; fields: EventFields };

/** What a change did, with the event's next run when it was written; "unavailable": no folder. */
export type EventChangeResult =
  | (Extract<EventChange, { ok: true }> & { nextRun?: number })
  | Extract<EventChange, { ok: false }>
  | { ok: false; reason: "unavailable"; problem: string };

/**
 * The event-file calls of the HTTP backend (BackendCalls): on the main thread, as the gateway's
 * watcher picks the files up from there — the same files `guppy events` reads and writes.
 */
export function createEventCalls(config: EventFilesConfig | undefined) {
  const unavailable = {
    ok: false as const,
    reason: "unavailable" as const,
    problem: "This gateway has no scheduled events.",
  };
  const listed = (event: EventSpec): ListedEvent => {
    const at = nextRun(event, Date.now(), config?.timezone);
    return at === undefined ? { event } : { event, nextRun: at };
  };
  return {
    listEvents: async (): Promise<EventListing | undefined> =>
      config ? { events: readEventFiles(config.dir).events.map(listed) } : undefined,
    changeEvent: async (request: EventRequest): Promise<EventChangeResult> => {
      if (!config) return unavailable;
      const change =
        request.action === "add"
          ? addEvent(config.dir, request.id, request.fields)
          : editEvent(config.dir, request.id, request.fields);
      return change.ok ? { ...change, ...listed(change.event) } : change;
    },
    removeEvent: async (id: string): Promise<boolean> =>
      config ? deleteEvent(config.dir, id) : false,
  };
}
