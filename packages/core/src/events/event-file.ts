import { knownTimeZone } from "../config/setting-parsers.js";
import { parseThreadId } from "../store/thread-layout.js";
import { cronProblem } from "./event-cron.js";
import { EVENT_TYPES, type EventType, scheduleForm } from "./event-kinds.js";

export type { EventType } from "./event-kinds.js";

/**
 * Where an event's prompt goes: an existing thread, or a new thread opened in a channel
 * (`Orchestrator.sendToChannel`).
 */
export type EventTarget = { threadId: string } | { adapterId: string; channelId: string };

/**
 * One `<home>/events/<id>.json` file, validated. `id` is the file's name without `.json`; the
 * file is the source of truth (`guppy events`, the `schedule` tool and the bus all read it).
 */
export type EventSpec = {
  id: string;
  type: EventType;
  text: string;
  /** ISO 8601 time (one-shot) or a 5- or 6-field cron expression (periodic); none for immediate. */
  schedule?: string;
  /** IANA zone the schedule is read in; absent: GUPPY_TIMEZONE, else the system's. */
  timezone?: string;
} & EventTarget;

/**
 * What the bus keeps of a loaded event: its fields but the text, which it reads again from the
 * file when the event fires (10,000 loaded events need not hold 10,000 prompts in the gateway).
 */
export type EventTiming = Pick<EventSpec, "id" | "type" | "schedule" | "timezone"> & EventTarget;

/** An event's fields without its text, in one object of one shape (no spread's spare slots). */
export function eventTiming(event: EventSpec): EventTiming {
  const { id, type, schedule, timezone } = event;
  return "threadId" in event
    ? { id, type, schedule, timezone, threadId: event.threadId }
    : { id, type, schedule, timezone, adapterId: event.adapterId, channelId: event.channelId };
}

/** What a file says, or the one-line problem that makes it unusable. */
export type ParsedEvent = { ok: true; event: EventSpec } | { ok: false; problem: string };

/** An event id is a file name: letters, digits, `-`, `_` and `.`, not starting with a dot. */
const ID_RE = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$/;

/** The fields an event file may hold (anything else is a typo worth naming). */
const FIELDS = new Set([
  "type",
  "threadId",
  "adapterId",
  "channelId",
  "text",
  "schedule",
  "timezone",
]);

/** The id an event file's name gives (`remind.json` → `remind`), or undefined for other files. */
export function eventIdOf(fileName: string): string | undefined {
  if (!fileName.endsWith(".json")) return undefined;
  const id = fileName.slice(0, -".json".length);
  return ID_RE.test(id) ? id : undefined;
}

/** Whether `id` can name an event file (the `schedule` tool's and `guppy events add --id`). */
export function validEventId(id: string): boolean {
  return ID_RE.test(id);
}

/**
 * Reads one event file's text. Problems are one line each, naming the field, so the renamed
 * `*.invalid` file's log line tells the user what to fix. `text` that is not JSON at all is
 * reported as such (the watcher retries it: a writer may not have finished).
 */
export function parseEventFile(id: string, text: string): ParsedEvent {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    const reason = (error as Error).message.split("\n")[0];
    return { ok: false, problem: `not valid JSON (${reason})` };
  }
  return validateEvent(id, raw);
}

/** Validates an event's fields (a parsed file, the `schedule` tool's or `guppy events add`'s). */
export function validateEvent(id: string, raw: unknown): ParsedEvent {
  const fail = (problem: string): ParsedEvent => ({ ok: false, problem });
  if (!validEventId(id)) {
    return fail(`id "${id}" must be letters, digits, "-", "_" or "." (not starting with ".")`);
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return fail("must be a JSON object");
  }
  const o = raw as Record<string, unknown>;
  const unknown = Object.keys(o).filter((k) => !FIELDS.has(k));
  if (unknown.length > 0) {
    return fail(`unknown field "${unknown[0]}" (fields: ${[...FIELDS].join(", ")})`);
  }
  for (const key of FIELDS) {
    if (o[key] !== undefined && typeof o[key] !== "string") {
      return fail(`"${key}" must be a string`);
    }
  }
  const s = o as Record<string, string | undefined>;
  const type = s.type as EventType | undefined;
  if (!type || !EVENT_TYPES.includes(type)) {
    return fail(`"type" must be ${EVENT_TYPES.join(", ")} (got ${JSON.stringify(s.type ?? null)})`);
  }
  if (!s.text?.trim()) return fail(`"text" is missing or empty`);
  const target = validateTarget(s);
  if (typeof target === "string") return fail(target);
  if (s.timezone !== undefined && !knownTimeZone(s.timezone)) {
    return fail(`"timezone" ${JSON.stringify(s.timezone)} is not an IANA time zone`);
  }
  const problem = validateSchedule(type, s.schedule, s.timezone);
  if (problem) return fail(problem);
  return {
    ok: true,
    event: {
      id,
      type,
      text: s.text,
      ...target,
      ...(s.schedule !== undefined && scheduleForm(type) !== "none"
        ? { schedule: s.schedule.trim() }
        : {}),
      ...(s.timezone !== undefined ? { timezone: zoneName(s.timezone) } : {}),
    },
  };
}

function validateTarget(s: Record<string, string | undefined>): EventTarget | string {
  if (s.threadId !== undefined) {
    if (s.adapterId !== undefined || s.channelId !== undefined) {
      return `give "threadId", or "adapterId" and "channelId", not both`;
    }
    try {
      parseThreadId(s.threadId);
    } catch (error) {
      return `"threadId": ${(error as Error).message}`;
    }
    return { threadId: s.threadId };
  }
  if (!s.adapterId || !s.channelId) {
    return `a target is missing: "threadId", or "adapterId" and "channelId"`;
  }
  return { adapterId: s.adapterId, channelId: s.channelId };
}

/** An ISO 8601 date-time: a date, "T", a time, an optional zone (`Z` or `±hh:mm`). */
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:?\d{2})?$/;

function validateSchedule(
  type: EventType,
  schedule: string | undefined,
  timezone: string | undefined,
): string | undefined {
  const form = scheduleForm(type);
  if (form === "none") {
    return schedule === undefined ? undefined : `an ${type} event takes no "schedule"`;
  }
  if (!schedule?.trim()) return `"schedule" is missing (a ${type} event needs one)`;
  const value = schedule.trim();
  if (form === "time") {
    if (
      !ISO_RE.test(value) ||
      Number.isNaN(Date.parse(value.replace(/(\.\d+)?(Z|[+-].*)?$/, "")))
    ) {
      return `"schedule" ${JSON.stringify(value)} is not an ISO 8601 time like 2026-12-01T09:00:00`;
    }
  } else {
    const fields = value.split(/\s+/).length;
    if (fields !== 5 && fields !== 6) {
      return `"schedule" ${JSON.stringify(value)} must be a cron expression of 5 fields, or 6 with seconds first`;
    }
  }
  const problem = cronProblem(value, timezone);
  if (problem) return `"schedule" ${JSON.stringify(value)}: ${problem}`;
  return undefined;
}

/**
 * Zone names as first met: 10,000 files naming the same few zones share one string per zone, not
 * one each (whether a zone is known is config's cached check, knownTimeZone).
 */
const zoneNames = new Map<string, string>();

/** `zone` as the string met first (equal, shared by the events that name it). */
function zoneName(zone: string): string {
  let name = zoneNames.get(zone);
  if (name === undefined) {
    if (zoneNames.size >= 1024) zoneNames.clear();
    name = zone;
    zoneNames.set(zone, name);
  }
  return name;
}

/** The file's content for an event: the fields without `id` (its name is the id). */
export function eventFileText(event: EventSpec): string {
  const { id: _id, ...fields } = event;
  return `${JSON.stringify(fields, null, 2)}\n`;
}

/** The event's target in one line: the thread id, or `adapter:channel (new thread)`. */
export function describeTarget(event: EventTarget): string {
  return "threadId" in event
    ? event.threadId
    : `${event.adapterId}:${event.channelId} (new thread)`;
}
