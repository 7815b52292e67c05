import { describe, expect, it } from "vitest";
import { timeStamp } from "../../src/time/local-time.js";

describe("time stamp of a user message", () => {
  it("says weekday, date, time and zone in the configured zone", () => {
    const now = new Date("2026-11-27T08:14:59Z");
    expect(timeStamp(now, "Europe/Berlin")).toBe("[Fri 2026-11-27 09:14 Europe/Berlin]");
    expect(timeStamp(now, "UTC")).toBe("[Fri 2026-11-27 08:14 UTC]");
    // Past midnight in Tokyo: the next day.
    expect(timeStamp(new Date("2026-11-27T15:05:00Z"), "Asia/Tokyo")).toBe(
      "[Sat 2026-11-28 00:05 Asia/Tokyo]",
    );
  });

  it("uses the system's zone when none is configured", () => {
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    expect(timeStamp(new Date(), undefined)).toMatch(
      new RegExp(
        `^\\[[A-Z][a-z]{2} \\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2} ${zone.replace("/", "\\/")}\\]$`,
      ),
    );
  });
});
