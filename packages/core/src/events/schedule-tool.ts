import { join } from "node:path";
import type { AgentTool } from "@mariozechner/pi-agent-core";
import { StringEnum } from "@mariozechner/pi-ai";
import { type Static, Type } from "typebox";
import { textResult } from "../tools/tool-context.js";
import { EVENTS_DIR } from "./create-event-bus.js";
import { describeTarget, type EventSpec, validateEvent } from "./event-file.js";
import { EVENT_KINDS, scheduleForm } from "./event-kinds.js";
import { eventZone, localTime, nextRun } from "./event-schedule.js";
import {
  eventExists,
  eventsForThread,
  newEventId,
  readEventFiles,
  removeEventFile,
  writeEventFile,
} from "./event-store.js";

/** The kinds as the tool names them: those with a schedule first (the agent's usual ones). */
const kinds = [
  ...EVENT_KINDS.filter((kind) => kind.schedule !== "none"),
  ...EVENT_KINDS.filter((kind) => kind.schedule === "none"),
];

/** `a, b<last>c`: the items as a list in a sentence. */
const listed = (items: readonly string[], last: string) =>
  `${items.slice(0, -1).join(", ")}${last}${items.at(-1)}`;

// Every request carries this schema: kept short (string enums, not unions of literals, which
// spell out an object per value).
const parameters = Type.Object({
  action: StringEnum(["create", "list", "cancel"] as const),
  type: Type.Optional(
    StringEnum(
      kinds.map((kind) => kind.type),
      {
        description: `create: ${listed(
          kinds.map((kind) => kind.fires),
          ", or ",
        )}`,
      },
    ),
  ),
  text: Type.Optional(Type.String({ description: "create: the prompt you get when it fires" })),
  schedule: Type.Optional(
    Type.String({
      description: kinds
        .flatMap((kind) => ("scheduleHelp" in kind ? [`${kind.type}: ${kind.scheduleHelp}`] : []))
        .join("; "),
    }),
  ),
  timezone: Type.Optional(Type.String({ description: "IANA zone (default: the configured one)" })),
  id: Type.Optional(Type.String({ description: "cancel: the event's id; create: optional" })),
  threadId: Type.Optional(
    Type.String({ description: "create: another thread (default: this one)" }),
  ),
  adapterId: Type.Optional(
    Type.String({ description: "create: with channelId, a new thread there" }),
  ),
  channelId: Type.Optional(Type.String()),
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
      "Schedule a prompt to yourself (a reminder, a recurring job): when it fires you get its text as a new message here. Also lists and cancels this conversation's events.",
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
      if (!params.type) {
        throw new Error(
          `create needs "type": ${listed(
            kinds.map((kind) => kind.type),
            " or ",
          )}`,
        );
      }
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
      if (scheduleForm(event.type) === "time" && at !== undefined && at <= now()) {
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
