import { describe, expect, it } from "vitest";
import { EVENT_KINDS, EVENT_TYPES, eventKind, scheduleForm } from "../../src/events/event-kinds.js";

describe("the table of event kinds", () => {
  it("lists the kinds in the order errors and help name them", () => {
    expect(EVENT_TYPES).toEqual(["immediate", "one-shot", "periodic"]);
    expect(EVENT_KINDS.map((kind) => kind.type)).toEqual(EVENT_TYPES);
  });

  it("says what each kind's schedule holds", () => {
    expect(EVENT_TYPES.map(scheduleForm)).toEqual(["none", "time", "cron"]);
  });

  it("gives a help line for each kind that takes a schedule, and none for the rest", () => {
    for (const kind of EVENT_KINDS) {
      expect("scheduleHelp" in kind).toBe(kind.schedule !== "none");
    }
  });

  it("knows no other kind", () => {
    expect(eventKind("daily")).toBeUndefined();
  });
});
