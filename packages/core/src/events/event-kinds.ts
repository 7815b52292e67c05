// The kinds of scheduled event, as data: the bus, `guppy events`, the `schedule` tool, the HTTP
// API and the control UI read them here. It imports nothing, so the UI's bundle can import it by
// path (packages/guppy/ui/src/api/events.ts).

/** What an event file's `schedule` holds: none (it fires as it appears), an ISO time, a cron. */
export type ScheduleForm = "none" | "time" | "cron";

/** One kind of event file: its `type`, its schedule, and how help and errors describe it. */
export interface EventKind {
  readonly type: string;
  readonly schedule: ScheduleForm;
  /** When it fires, in the `schedule` tool's words. */
  readonly fires: string;
  /** What its `schedule` is, in the `schedule` tool's words; absent when it takes none. */
  readonly scheduleHelp?: string;
}

/** Every kind, in the order errors and `guppy events` list them. */
export const EVENT_KINDS = [
  { type: "immediate", schedule: "none", fires: "now" },
  {
    type: "one-shot",
    schedule: "time",
    fires: "once at a time",
    scheduleHelp: "ISO 8601 local time (2026-12-01T09:00:00)",
  },
  {
    type: "periodic",
    schedule: "cron",
    fires: "on a cron schedule",
    scheduleHelp: "cron, 5 fields or 6 with seconds first",
  },
] as const satisfies readonly EventKind[];

/** How an event file fires: once when it appears, once at a time, or on a cron schedule. */
export type EventType = (typeof EVENT_KINDS)[number]["type"];

/** The kinds that take a schedule (the control UI's form offers these). */
export type ScheduledEventType = Exclude<
  (typeof EVENT_KINDS)[number],
  { schedule: "none" }
>["type"];

export const EVENT_TYPES: readonly EventType[] = EVENT_KINDS.map((kind) => kind.type);

/** The kind named `type`, or undefined for a name no kind has. */
export function eventKind(type: string): (typeof EVENT_KINDS)[number] | undefined {
  return EVENT_KINDS.find((kind) => kind.type === type);
}

/** What `schedule` an event of `type` takes. */
export function scheduleForm(type: EventType): ScheduleForm {
  return eventKind(type)?.schedule ?? "none";
}
