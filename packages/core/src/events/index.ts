// @guppy/core/events: scheduled events (`<home>/events/*.json`) — the bus `guppy serve` runs,
// and the file helpers `guppy events` and the `schedule` tool use.
export { createEventBus, EVENTS_DIR } from "./create-event-bus.js";
export {
  addEvent,
  deleteEvent,
  type EventChange,
  type EventFields,
  editEvent,
  readEvent,
} from "./event-edits.js";
export {
  describeTarget,
  type EventSpec,
  type ParsedEvent,
  parseEventFile,
  validateEvent,
  validEventId,
} from "./event-file.js";
export {
  EVENT_KINDS,
  EVENT_TYPES,
  type EventKind,
  type EventType,
  eventKind,
  type ScheduledEventType,
  type ScheduleForm,
  scheduleForm,
} from "./event-kinds.js";
export { RUNS_FILE, type RunRecord } from "./event-runs.js";
export { localTime, nextRun } from "./event-schedule.js";
export {
  eventExists,
  eventsForThread,
  newEventId,
  readEventFiles,
  removeEventFile,
  writeEventFile,
} from "./event-store.js";
export type {
  EventBus,
  EventBusOptions,
  EventBusReport,
  EventClock,
  ScheduledEvent,
} from "./types.js";
