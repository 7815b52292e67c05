import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { integerValue, knownTimeZone, timezoneValue } from "../../src/config/setting-parsers.js";
import { validateEvent } from "../../src/events/event-file.js";

describe("integerValue", () => {
  const port = integerValue(0, 65_535);

  it.each(["0x10", "0b101", "0o17", "1e3", "1E2", "16.0", "1_000", "+5", "Infinity", "12a", "-0"])(
    "refuses %j: integers are plain decimal digits",
    (raw) => {
      expect(port(raw)).toEqual({ ok: false, expected: "an integer from 0 to 65535" });
    },
  );

  it("reads every integer in range written in decimal, with spaces around or leading zeros", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 65_535 }), fc.nat({ max: 3 }), (n, zeros) => {
        expect(port(` ${"0".repeat(zeros)}${n} `)).toEqual({ ok: true, value: n });
      }),
    );
  });

  it("takes a minus sign only where negatives are allowed", () => {
    const signed = integerValue(-10, 10);
    expect(signed("-7")).toEqual({ ok: true, value: -7 });
    expect(signed("- 7").ok).toBe(false);
    expect(integerValue(0)("-7").ok).toBe(false);
  });

  it("takes a JSON number that is an integer in range", () => {
    expect(port(8080)).toEqual({ ok: true, value: 8080 });
    expect(port(80.5).ok).toBe(false);
    expect(port(true).ok).toBe(false);
  });
});

describe("time zones: GUPPY_TIMEZONE and an event file's timezone", () => {
  it.each(["Europe/Berlin", "UTC", "America/New_York", "Mars/Olympus", "Europe/Berlinn", ""])(
    "%j is accepted by both or by neither (one check)",
    (zone) => {
      const setting = timezoneValue(zone).ok;
      const event = validateEvent("e", {
        type: "immediate",
        text: "a",
        threadId: "telegram:42:default",
        timezone: zone,
      });
      expect(knownTimeZone(zone)).toBe(setting);
      expect(event.ok).toBe(setting);
    },
  );

  it("knows the IANA zones and refuses the rest", () => {
    expect(knownTimeZone("Asia/Tokyo")).toBe(true);
    expect(knownTimeZone("Mars/Olympus")).toBe(false);
    expect(knownTimeZone("  ")).toBe(false);
    expect(timezoneValue(" Asia/Tokyo ")).toEqual({ ok: true, value: "Asia/Tokyo" });
  });
});
