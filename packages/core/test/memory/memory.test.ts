import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  addDays,
  dailyNotePath,
  localDate,
  readMemoryLevels,
  readRecentDailyNotes,
} from "../../src/memory/memory.js";
import { tempHome } from "../helpers/temp-home.js";

describe("readMemoryLevels", () => {
  let t: ReturnType<typeof tempHome>;
  beforeEach(() => {
    t = tempHome();
  });
  afterEach(() => t.cleanup());

  it("finds the global, transport and channel MEMORY.md of a thread, broadest first", () => {
    t.write("MEMORY.md", "global fact");
    t.write("telegram/MEMORY.md", "telegram fact");
    t.write("telegram/-100123/MEMORY.md", "channel fact");
    t.write("telegram/-100999/MEMORY.md", "another channel's fact");
    t.write("slack/MEMORY.md", "slack fact");
    const levels = readMemoryLevels(t.home, "telegram:-100123:42");
    expect(levels.map((l) => [l.scope, l.title, l.path, l.content])).toEqual([
      ["global", "Global Memory", join(t.home, "MEMORY.md"), "global fact"],
      [
        "transport",
        "Transport Memory (telegram)",
        join(t.home, "telegram/MEMORY.md"),
        "telegram fact",
      ],
      [
        "channel",
        "Channel Memory (telegram:-100123)",
        join(t.home, "telegram/-100123/MEMORY.md"),
        "channel fact",
      ],
    ]);
  });

  it("encodes the channel id like the store does (no escaping the data directory)", () => {
    t.write("gchat/spaces%2FABC/MEMORY.md", "space fact");
    const [, , channel] = readMemoryLevels(t.home, "gchat:spaces/ABC:t1");
    expect(channel?.path).toBe(join(t.home, "gchat", "spaces%2FABC", "MEMORY.md"));
    expect(channel?.content).toBe("space fact");
  });

  it("leaves content undefined for missing, empty, blank and comment-only files", () => {
    t.write("MEMORY.md", "");
    t.write("cli/MEMORY.md", "  \n\n");
    t.write("cli/local/MEMORY.md", "<!-- write channel memory here -->\n");
    const levels = readMemoryLevels(t.home, "cli:local:default");
    expect(levels.map((l) => l.content)).toEqual([undefined, undefined, undefined]);
    expect(readMemoryLevels(t.home, "other:x:y").every((l) => l.content === undefined)).toBe(true);
  });

  it("reads the files fresh on every call", () => {
    expect(readMemoryLevels(t.home, "cli:local:default")[0]?.content).toBeUndefined();
    t.write("MEMORY.md", "likes tea");
    expect(readMemoryLevels(t.home, "cli:local:default")[0]?.content).toBe("likes tea");
    t.write("MEMORY.md", "likes coffee now\r\n");
    expect(readMemoryLevels(t.home, "cli:local:default")[0]?.content).toBe("likes coffee now");
  });
});

describe("daily notes", () => {
  let t: ReturnType<typeof tempHome>;
  beforeEach(() => {
    t = tempHome();
  });
  afterEach(() => t.cleanup());

  it("lives at <home>/memory/YYYYMM/YYYYMMDD.md", () => {
    expect(dailyNotePath("/h", "2026-03-07")).toBe(join("/h", "memory", "202603", "20260307.md"));
  });

  it("uses the configured time zone's date just before and after midnight", () => {
    // 07:30 UTC on 1 March is still 28 February, 23:30 in Los Angeles (UTC-8).
    const beforeMidnight = new Date("2026-03-01T07:30:00Z");
    expect(localDate(beforeMidnight, "America/Los_Angeles")).toBe("2026-02-28");
    expect(localDate(beforeMidnight, "UTC")).toBe("2026-03-01");
    const notes = readRecentDailyNotes(t.home, beforeMidnight, "America/Los_Angeles");
    expect(notes.map((n) => n.date)).toEqual(["2026-02-28", "2026-02-27", "2026-02-26"]);
    expect(notes[0]?.path).toBe(join(t.home, "memory", "202602", "20260228.md"));
    // An hour later it is 00:30 on 1 March there.
    const afterMidnight = new Date("2026-03-01T08:30:00Z");
    expect(
      readRecentDailyNotes(t.home, afterMidnight, "America/Los_Angeles").map((n) => n.date),
    ).toEqual(["2026-03-01", "2026-02-28", "2026-02-27"]);
  });

  it("crosses a year boundary ahead of UTC and a leap day", () => {
    // 11:30 UTC on 31 December is 00:30 on 1 January in Auckland (UTC+13 in summer).
    const nye = new Date("2026-12-31T11:30:00Z");
    expect(readRecentDailyNotes(t.home, nye, "Pacific/Auckland").map((n) => n.path)).toEqual([
      join(t.home, "memory", "202701", "20270101.md"),
      join(t.home, "memory", "202612", "20261231.md"),
      join(t.home, "memory", "202612", "20261230.md"),
    ]);
    expect(addDays("2028-03-01", -1)).toBe("2028-02-29");
    expect(addDays("2027-03-01", -1)).toBe("2027-02-28");
  });

  it("reads today's and the previous two days' notes, skipping missing and blank ones", () => {
    const now = new Date("2026-05-10T12:00:00Z");
    t.write("memory/202605/20260510.md", "today: shipped v1\n");
    t.write("memory/202605/20260509.md", "   \n");
    t.write("memory/202605/20260508.md", "two days ago");
    t.write("memory/202605/20260507.md", "too old");
    const notes = readRecentDailyNotes(t.home, now, "UTC");
    expect(notes.map((n) => [n.date, n.content])).toEqual([
      ["2026-05-10", "today: shipped v1"],
      ["2026-05-09", undefined],
      ["2026-05-08", "two days ago"],
    ]);
  });
});
