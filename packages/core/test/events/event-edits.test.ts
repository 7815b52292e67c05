import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { addEvent, deleteEvent, editEvent, readEvent } from "../../src/events/event-edits.js";

const dirs: string[] = [];
const eventsDir = () => {
  const dir = join(mkdtempSync(join(tmpdir(), "guppy-event-edits-")), "events");
  dirs.push(dir);
  return dir;
};
const fileOf = (dir: string, id: string) =>
  JSON.parse(readFileSync(join(dir, `${id}.json`), "utf8")) as Record<string, unknown>;

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(join(dir, ".."), { recursive: true, force: true });
});

describe("event edits: add, edit, delete on the files", () => {
  it("adds a file (creating the folder), with a fresh id when none is given", () => {
    const dir = eventsDir();
    const added = addEvent(dir, undefined, {
      type: "one-shot",
      text: "hi",
      threadId: "http:api:x",
      schedule: "2099-01-01T09:00:00",
    });
    if (!added.ok) throw new Error(added.problem);
    expect(added.event.id).toMatch(/^one-shot-[a-z0-9]{6}$/);
    expect(fileOf(dir, added.event.id)).toEqual({
      type: "one-shot",
      text: "hi",
      threadId: "http:api:x",
      schedule: "2099-01-01T09:00:00",
    });
  });

  it("refuses a bad id, a taken id and bad fields, writing nothing", () => {
    const dir = eventsDir();
    const fields = { type: "immediate", text: "t", threadId: "http:api:x" };
    expect(addEvent(dir, ".hidden", fields)).toEqual({
      ok: false,
      reason: "invalid",
      problem: `"id" ".hidden": use letters, digits, "-", "_" or "." (not first)`,
    });
    expect(addEvent(dir, "a", fields).ok).toBe(true);
    expect(addEvent(dir, "a", { ...fields, text: "other" })).toMatchObject({
      ok: false,
      reason: "exists",
    });
    expect(fileOf(dir, "a").text).toBe("t");
    const bad = addEvent(dir, "b", { ...fields, schedule: "0 9 * * *" });
    expect(bad).toMatchObject({ ok: false, reason: "invalid" });
    expect(existsSync(join(dir, "b.json"))).toBe(false);
  });

  it("edits: given fields replace, a new target replaces the old whole, null removes", () => {
    const dir = eventsDir();
    addEvent(dir, "p", {
      type: "periodic",
      text: "old",
      threadId: "http:api:x",
      schedule: "0 9 * * *",
      timezone: "Europe/Berlin",
    });
    const edited = editEvent(dir, "p", {
      text: "new",
      adapterId: "telegram",
      channelId: "1",
      timezone: null,
    });
    expect(edited.ok).toBe(true);
    expect(fileOf(dir, "p")).toEqual({
      type: "periodic",
      text: "new",
      adapterId: "telegram",
      channelId: "1",
      schedule: "0 9 * * *",
    });
    // To immediate: the schedule goes with the change.
    expect(editEvent(dir, "p", { type: "immediate" }).ok).toBe(true);
    expect(readEvent(dir, "p")).toEqual({
      id: "p",
      type: "immediate",
      text: "new",
      adapterId: "telegram",
      channelId: "1",
    });
  });

  it("an edit that does not validate leaves the file as it was; unknown ids are unknown", () => {
    const dir = eventsDir();
    addEvent(dir, "p", {
      type: "periodic",
      text: "t",
      threadId: "http:api:x",
      schedule: "* * * * *",
    });
    const before = readFileSync(join(dir, "p.json"), "utf8");
    expect(editEvent(dir, "p", { schedule: null })).toMatchObject({
      ok: false,
      reason: "invalid",
      problem: expect.stringContaining('"schedule" is missing'),
    });
    expect(readFileSync(join(dir, "p.json"), "utf8")).toBe(before);
    expect(editEvent(dir, "q", { text: "x" })).toMatchObject({ ok: false, reason: "unknown" });
    writeFileSync(join(dir, "broken.json"), "{");
    expect(editEvent(dir, "broken", { text: "x" })).toMatchObject({ reason: "unknown" });
    expect(deleteEvent(dir, "../p")).toBe(false);
    expect(deleteEvent(dir, "p")).toBe(true);
    expect(deleteEvent(dir, "p")).toBe(false);
  });
});
