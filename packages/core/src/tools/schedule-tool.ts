import { join } from "node:path";
import type { AgentTool } from "@mariozechner/pi-agent-core";
import { type Static, Type } from "typebox";
import { EVENTS_DIR } from "../events/create-event-bus.js";
import { describeTarget, type EventSpec, validateEvent } from "../events/event-file.js";
import { eventZone, localTime, nextRun } from "../events/event-schedule.js";
import {
  eventExists,
  eventsForThread,
  newEventId,
  readEventFiles,
  removeEventFile,
  writeEventFile,
} from "../events/event-store.js";
import { textResult } from "./tool-context.js";

const parameters = Type.Object({
  action: Type.Union([Type.Literal("create"), Type.Literal("list"), Type.Literal("cancel")], {
    description: "create an event, list this conversation's events, or cancel one by id",
  }),
  type: Type.Optional(
    Type.Union([Type.Literal("immediate"), Type.Literal("one-shot"), Type.Literal("periodic")], {
      description:
        "create: one-shot (once at a time), periodic (on a cron schedule) or immediate (now)",
    }),
  ),
  text: Type.Optional(
    Type.String({ description: "create: the prompt you will get when the event fires" }),
  ),
  schedule: Type.Optional(
    Type.String({
      description:
        "create: one-shot: an ISO 8601 local time like 2026-12-01T09:00:00; periodic: a cron expression, 5 fields (min hour day month weekday) or 6 with seconds first",
    }),
  ),
  timezone: Type.Optional(
    Type.String({ description: "create: IANA zone of the schedule (default: the configured one)" }),
  ),
  id: Type.Optional(
    Type.String({ description: "cancel: the event's id; create: an id to give it (optional)" }),
  ),
  threadId: Type.Optional(
    Type.String({ description: "create: another thread to target (default: this conversation)" }),
  ),
  adapterId: Type.Optional(
    Type.String({ description: "create: with channelId, open a new thread in that channel" }),
  ),
  channelId: Type.Optional(Type.String({ description: "create: the channel, with adapterId" })),
});

type Params = Static<typeof parameters>;

export interface ScheduleToolOptions {
  /** GUPPY_HOME: events are `<home>/events/*.json` (the gateway's event bus reads them). */
  home: string;
  /** The thread the tool is made for: the default target, and what `list` shows. */
  threadId: string;
  /** GUPPY_TIMEZONE (absent: the system's). */
  timezone?: string;
  now?: () => number;
}

/**
 * `schedule`: the agent's own reminders and recurring jobs. It only writes, lists and removes
 * event files (the gateway's event bus fires them), so it works in `guppy chat` too. Only an
 * owner's runs have it (tool policy: guest false), so the other-thread and channel targets are
 * an owner's.
 */
export function createScheduleTool(options: ScheduleToolOptions): AgentTool<typeof parameters> {
  const dir = join(options.home, EVENTS_DIR);
  const now = options.now ?? Date.now;
  const when = (event: EventSpec): string => {
    const at = nextRun(event, now(), options.timezone);
    if (at === undefined) return "never (the schedule has no future time)";
    return `${localTime(at, eventZone(event, options.timezone))} (${new Date(at).toISOString()})`;
  };
  return {
    name: "schedule",
    label: "schedule",
    description:
      "Schedule a prompt to yourself: a reminder at a time (one-shot), a recurring job (periodic, cron) or one now (immediate). When it fires you get its text as a new message in this conversation and can act on it. Also lists and cancels this conversation's events.",
    parameters,
    async execute(_id, params: Params) {
      if (params.action === "list") {
        const mine = eventsForThread(readEventFiles(dir).events, options.threadId);
        if (mine.length === 0) return textResult("No scheduled events for this conversation.", {});
        const lines = mine.map(
          (e) => `${e.id}  ${e.type}  ${e.schedule ?? "now"}  next: ${when(e)}  — ${e.text}`,
        );
        return textResult(lines.join("\n"), { ids: mine.map((e) => e.id) });
      }
      if (params.action === "cancel") {
        if (!params.id) throw new Error(`cancel needs "id" (see action "list")`);
        if (!removeEventFile(dir, params.id)) throw new Error(`no event with id "${params.id}"`);
        return textResult(`Cancelled event ${params.id}.`, { id: params.id });
      }
      if (!params.type) throw new Error(`create needs "type": one-shot, periodic or immediate`);
      if (params.id !== undefined && eventExists(dir, params.id)) {
        throw new Error(
          `an event with id "${params.id}" exists: cancel it first or pick another id`,
        );
      }
      const id = params.id ?? newEventId(dir, params.type);
      const target =
        params.adapterId !== undefined || params.channelId !== undefined
          ? { adapterId: params.adapterId, channelId: params.channelId }
          : { threadId: params.threadId ?? options.threadId };
      const parsed = validateEvent(id, {
        type: params.type,
        text: params.text,
        ...target,
        ...(params.schedule !== undefined ? { schedule: params.schedule } : {}),
        ...(params.timezone !== undefined ? { timezone: params.timezone } : {}),
      });
      if (!parsed.ok) throw new Error(parsed.problem);
      const event = parsed.event;
      const at = nextRun(event, now(), options.timezone);
      if (event.type === "one-shot" && at !== undefined && at <= now()) {
        const zone = eventZone(event, options.timezone);
        throw new Error(
          `"schedule" ${event.schedule} is in the past (now: ${localTime(now(), zone)})`,
        );
      }
      writeEventFile(dir, event);
      return textResult(
        `Scheduled event ${id} (${event.type}) for ${describeTarget(event)}; next run: ${when(event)}.`,
        { id, nextRun: at === undefined ? undefined : new Date(at).toISOString() },
      );
    },
  };
}
