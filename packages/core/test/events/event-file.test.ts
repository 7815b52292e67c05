import { Cron } from "croner";
import { describe, expect, it } from "vitest";
import { cronNext } from "../../src/events/event-cron.js";
import { eventIdOf, parseEventFile, validateEvent } from "../../src/events/event-file.js";
import { nextRun, nextSlot, oneShotTime } from "../../src/events/event-schedule.js";

const thread = "telegram:42:default";

describe("event files: validation", () => {
  it("reads the seed's two shapes: an existing thread, and a channel for a new thread", () => {
    const periodic = parseEventFile(
      "check",
      JSON.stringify({
        type: "periodic",
        threadId: "slack:C123ABC:1234567890.123456",
        text: "Check for new GitHub notifications",
        schedule: "0 9 * * 1-5",
        timezone: "America/New_York",
      }),
    );
    expect(periodic).toEqual({
      ok: true,
      event: {
        id: "check",
        type: "periodic",
        threadId: "slack:C123ABC:1234567890.123456",
        text: "Check for new GitHub notifications",
        schedule: "0 9 * * 1-5",
        timezone: "America/New_York",
      },
    });
    const oneShot = parseEventFile(
      "report",
      JSON.stringify({
        type: "one-shot",
        channelId: "C123ABC",
        adapterId: "slack",
        text: "Time for the weekly report",
        schedule: "2025-03-01T09:00:00",
        timezone: "America/New_York",
      }),
    );
    expect(oneShot.ok && oneShot.event).toMatchObject({ adapterId: "slack", channelId: "C123ABC" });
  });

  it("names the problem in one line", () => {
    const problem = (raw: unknown) => {
      const r = validateEvent("x", raw);
      return r.ok ? "ok" : r.problem;
    };
    expect(parseEventFile("x", '{"type": "immediate", "text": ')).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/^not valid JSON/),
    });
    expect(problem([])).toBe("must be a JSON object");
    expect(problem({ type: "weekly", threadId: thread, text: "a" })).toMatch(
      /"type" must be immediate, one-shot, periodic/,
    );
    expect(problem({ type: "immediate", threadId: thread })).toMatch(/"text" is missing/);
    expect(problem({ type: "immediate", text: "a" })).toMatch(/a target is missing/);
    expect(problem({ type: "immediate", text: "a", adapterId: "slack" })).toMatch(
      /a target is missing/,
    );
    expect(problem({ type: "immediate", text: "a", threadId: "BAD ID" })).toMatch(
      /"threadId": Invalid thread id/,
    );
    expect(
      problem({ type: "immediate", text: "a", threadId: thread, schedule: "* * * * *" }),
    ).toMatch(/takes no "schedule"/);
    expect(problem({ type: "periodic", text: "a", threadId: thread })).toMatch(
      /"schedule" is missing/,
    );
    expect(problem({ type: "periodic", text: "a", threadId: thread, schedule: "* * *" })).toMatch(
      /5 fields, or 6/,
    );
    expect(
      problem({ type: "periodic", text: "a", threadId: thread, schedule: "* * * * * * *" }),
    ).toMatch(/5 fields, or 6/);
    expect(
      problem({ type: "periodic", text: "a", threadId: thread, schedule: "99 * * * *" }),
    ).toMatch(/^"schedule" "99 \* \* \* \*": /);
    expect(
      problem({ type: "one-shot", text: "a", threadId: thread, schedule: "tomorrow 9am" }),
    ).toMatch(/not an ISO 8601 time/);
    expect(
      problem({ type: "one-shot", text: "a", threadId: thread, schedule: "2026-13-45T09:00:00" }),
    ).toMatch(/not an ISO 8601 time|schedule/);
    expect(
      problem({ type: "immediate", text: "a", threadId: thread, timezone: "Mars/Olympus" }),
    ).toMatch(/not an IANA time zone/);
    expect(problem({ type: "immediate", text: "a", threadId: thread, when: "now" })).toMatch(
      /unknown field "when"/,
    );
    expect(problem({ type: "immediate", text: 3, threadId: thread })).toMatch(
      /"text" must be a string/,
    );
    for (const message of ["must be a JSON object", "unknown field"])
      expect(message).not.toContain("\n");
  });

  it("takes ids from file names, never dotfiles, temp files or renamed invalid ones", () => {
    expect(eventIdOf("remind-me.json")).toBe("remind-me");
    expect(eventIdOf(".runs.jsonl")).toBeUndefined();
    expect(eventIdOf("x.json.invalid")).toBeUndefined();
    expect(eventIdOf("x.json.123.abcd.tmp")).toBeUndefined();
    expect(eventIdOf(".hidden.json")).toBeUndefined();
  });
});

describe("event schedules (croner)", () => {
  const spec = (
    schedule: string,
    timezone?: string,
    type: "periodic" | "one-shot" = "periodic",
  ) => {
    const r = validateEvent("e", {
      type,
      text: "t",
      threadId: thread,
      schedule,
      ...(timezone ? { timezone } : {}),
    });
    if (!r.ok) throw new Error(r.problem);
    return r.event;
  };

  it("gives 6-field slots every 2 s and 5-field slots on the minute", () => {
    const start = Date.parse("2026-11-27T10:00:00.500Z");
    const every2 = spec("*/2 * * * * *");
    expect(new Date(nextSlot(every2, start, "UTC") ?? 0).toISOString()).toBe(
      "2026-11-27T10:00:02.000Z",
    );
    const slot = nextSlot(every2, Date.parse("2026-11-27T10:00:02.000Z"), "UTC");
    expect(new Date(slot ?? 0).toISOString()).toBe("2026-11-27T10:00:04.000Z");
    const daily9 = spec("0 9 * * *", "Europe/Berlin");
    expect(new Date(nextSlot(daily9, start, undefined) ?? 0).toISOString()).toBe(
      "2026-11-28T08:00:00.000Z",
    );
  });

  it("reads a one-shot's local time in its zone, the default zone, or its own offset", () => {
    expect(oneShotTime(spec("2026-12-01T09:00:00", "America/New_York", "one-shot"), "UTC")).toBe(
      Date.parse("2026-12-01T14:00:00Z"),
    );
    expect(oneShotTime(spec("2026-07-01T09:00:00", undefined, "one-shot"), "Europe/Berlin")).toBe(
      Date.parse("2026-07-01T07:00:00Z"),
    );
    expect(oneShotTime(spec("2026-07-01T09:00:00Z", undefined, "one-shot"), "Europe/Berlin")).toBe(
      Date.parse("2026-07-01T09:00:00Z"),
    );
    // A past one-shot keeps its time (it fires late), and its next run is now.
    const past = spec("2020-01-01T09:00:00", "UTC", "one-shot");
    expect(oneShotTime(past, undefined)).toBe(Date.parse("2020-01-01T09:00:00Z"));
    expect(nextRun(past, 1_000_000_000_000_0, undefined)).toBe(1_000_000_000_000_0);
  });
});

describe("event files: the next slot, kept per schedule", () => {
  it("answers as croner does for any time, in any order, across daylight saving", () => {
    // cronNext reuses its last answer for times before that answer: the same as asking croner.
    const schedules: Array<[string, string | undefined]> = [
      ["30 2 * * *", "Europe/Berlin"],
      ["*/7 * * * * *", "UTC"],
      ["0 9 * * 1-5", "America/New_York"],
      ["15 1,2,3 * * *", "America/New_York"],
      ["0 0 29 2 *", undefined],
    ];
    const base = Date.parse("2026-03-28T00:00:00Z");
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (const [schedule, zone] of schedules) {
      const croner = new Cron(schedule, { ...(zone ? { timezone: zone } : {}), paused: true });
      let after = base;
      for (let i = 0; i < 300; i++) {
        // Mostly forward by a little (a firing, then the next), sometimes a jump back.
        after = random() < 0.2 ? base + random() * 400 * 86_400_000 : after + random() * 7_200_000;
        after = Math.floor(after);
        expect(cronNext(schedule, zone, after), `${schedule} ${zone} after ${after}`).toBe(
          croner.nextRun(new Date(after))?.getTime(),
        );
      }
    }
  });
});
