import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { timeUntil } from "../../ui/src/format.js";
import {
  cronWords,
  isoWithOffset,
  localInputValue,
  offsetText,
} from "../../ui/src/pages/schedule-time.js";

describe("cronWords: simple cron expressions in words, others left alone", () => {
  it.each([
    ["0 9 * * 1-5", "weekdays at 09:00"],
    ["30 7 * * *", "every day at 07:30"],
    ["0 10 * * 0,6", "weekends at 10:00"],
    ["15 8 * * 1", "Mondays at 08:15"],
    ["0 18 * * 1,3,5", "Mondays, Wednesdays and Fridays at 18:00"],
    ["0 9 1 * *", "monthly on day 1 at 09:00"],
    ["*/15 * * * *", "every 15 minutes"],
    ["* * * * *", "every minute"],
    ["5 * * * *", "every hour at :05"],
    ["0 */2 * * *", "every 2 hours at :00"],
    ["0 0 9 * * 1-5", "weekdays at 09:00"],
    ["*/10 * * * * *", "every 10 seconds"],
  ])("%s → %s", (expression, words) => {
    expect(cronWords(expression)).toBe(words);
  });

  it.each([
    "0 9 * 1 *",
    "0 9-17 * * *",
    "0 9 1 * 1",
    "15 0 9 * * *",
    "every morning",
    "0 9 * * MON",
  ])("%s has no words (the raw expression is shown)", (expression) => {
    expect(cronWords(expression)).toBeUndefined();
  });
});

describe("the browser's local time and back, with its offset", () => {
  const zone = process.env.TZ;
  beforeAll(() => {
    process.env.TZ = "Asia/Kolkata";
  });
  afterAll(() => {
    if (zone === undefined) delete process.env.TZ;
    else process.env.TZ = zone;
  });

  it("turns a datetime-local value into an ISO time with the local offset", () => {
    const iso = isoWithOffset("2026-11-28T02:14:21");
    expect(iso).toBe("2026-11-28T02:14:21+05:30");
    expect(new Date(iso as string).toISOString()).toBe("2026-11-27T20:44:21.000Z");
    expect(isoWithOffset("2026-11-28T02:14")).toBe("2026-11-28T02:14:00+05:30");
    expect(isoWithOffset("")).toBeUndefined();
    expect(isoWithOffset("tomorrow")).toBeUndefined();
  });

  it("fills a datetime-local input from an instant, in local time", () => {
    const date = new Date("2026-11-27T20:44:21Z");
    expect(localInputValue(date)).toBe("2026-11-28T02:14:21");
    expect(offsetText(date)).toBe("+05:30");
  });
});

describe("timeUntil", () => {
  const now = Date.parse("2026-11-27T12:00:00Z");
  it.each([
    ["2026-11-27T11:59:00Z", "due"],
    ["2026-11-27T12:00:20Z", "in 20 s"],
    ["2026-11-27T12:10:00Z", "in 10 min"],
    ["2026-11-27T17:00:00Z", "in 5 h"],
    ["2026-11-30T12:00:00Z", "in 3 days"],
  ])("%s → %s", (iso, text) => {
    expect(timeUntil(iso, now)).toBe(text);
  });
});
