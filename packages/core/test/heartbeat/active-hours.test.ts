import { describe, expect, it } from "vitest";
import {
  parseActiveHours,
  withinActiveHours,
  withinMinutes,
} from "../../src/heartbeat/active-hours.js";
import { minuteOfDay } from "../../src/time/local-time.js";

const at = (hhmm: string) => {
  const [h, m] = hhmm.split(":").map(Number);
  return (h ?? 0) * 60 + (m ?? 0);
};

describe("active hours (GUPPY_HEARTBEAT_HOURS)", () => {
  it("parses HH:MM-HH:MM and refuses anything else", () => {
    expect(parseActiveHours("08:00-22:00")).toEqual({ start: 480, end: 1320 });
    expect(parseActiveHours(" 8:30 - 17:45 ")).toEqual({ start: 510, end: 1065 });
    expect(parseActiveHours("22:00-06:00")).toEqual({ start: 1320, end: 360 });
    expect(parseActiveHours("00:00-24:00")).toEqual({ start: 0, end: 1440 });
    for (const bad of [
      "",
      "8-22",
      "08:00",
      "08:00-25:00",
      "08:60-09:00",
      "09:00-09:00",
      "24:00-08:00",
      "x",
    ]) {
      expect(parseActiveHours(bad), bad).toBeUndefined();
    }
  });

  it("takes the start and leaves the end out of a day window", () => {
    const day = parseActiveHours("08:00-22:00");
    if (!day) throw new Error("unparsed");
    expect(withinMinutes(day, at("07:59"))).toBe(false);
    expect(withinMinutes(day, at("08:00"))).toBe(true);
    expect(withinMinutes(day, at("21:59"))).toBe(true);
    expect(withinMinutes(day, at("22:00"))).toBe(false);
    expect(withinMinutes(day, at("03:00"))).toBe(false);
  });

  it("spans midnight when the start is after the end", () => {
    const night = parseActiveHours("22:00-06:00");
    if (!night) throw new Error("unparsed");
    expect(withinMinutes(night, at("21:59"))).toBe(false);
    expect(withinMinutes(night, at("22:00"))).toBe(true);
    expect(withinMinutes(night, at("23:59"))).toBe(true);
    expect(withinMinutes(night, at("00:00"))).toBe(true);
    expect(withinMinutes(night, at("05:59"))).toBe(true);
    expect(withinMinutes(night, at("06:00"))).toBe(false);
    expect(withinMinutes(night, at("12:00"))).toBe(false);
  });

  it("reads the window in the configured time zone", () => {
    const day = parseActiveHours("08:00-22:00");
    // 06:30 UTC is 07:30 in Berlin (winter) and 15:30 in Tokyo.
    const now = new Date("2026-11-27T06:30:00Z");
    expect(withinActiveHours(day, now, "Europe/Berlin")).toBe(false);
    expect(withinActiveHours(day, now, "Asia/Tokyo")).toBe(true);
    expect(withinActiveHours(undefined, now, "Europe/Berlin")).toBe(true);
    expect(minuteOfDay(now, "Asia/Tokyo")).toBe(at("15:30"));
  });
});
