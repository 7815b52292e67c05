import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createScheduleTool } from "../../src/events/schedule-tool.js";
import { tempHome } from "../helpers/temp-home.js";

const homes: Array<ReturnType<typeof tempHome>> = [];
afterEach(() => {
  for (const h of homes.splice(0)) h.cleanup();
});

const now = Date.parse("2026-11-27T08:14:00Z");

function tool(threadId = "telegram:42:default") {
  const h = tempHome();
  homes.push(h);
  return {
    home: h.home,
    tool: createScheduleTool({ home: h.home, threadId, timezone: "Europe/Berlin", now: () => now }),
  };
}

const text = (result: { content: Array<{ type: string; text?: string }> }) =>
  result.content.map((c) => c.text ?? "").join("");

describe("the schedule tool", () => {
  it("creates an event file for the current thread and answers with its id and next run", async () => {
    const { home, tool: t } = tool();
    const result = await t.execute("c1", {
      action: "create",
      type: "one-shot",
      text: "call mum",
      schedule: "2026-11-27T18:00:00",
    });
    const id =
      /^Scheduled event (one-shot-\w+) \(one-shot\) for telegram:42:default; next run: 2026-11-27 18:00:00 Europe\/Berlin \(2026-11-27T17:00:00\.000Z\)\.$/.exec(
        text(result),
      )?.[1];
    expect(id).toBeDefined();
    expect(result.details).toEqual({ id, nextRun: "2026-11-27T17:00:00.000Z" });
    expect(JSON.parse(readFileSync(join(home, "events", `${id}.json`), "utf8"))).toEqual({
      type: "one-shot",
      text: "call mum",
      threadId: "telegram:42:default",
      schedule: "2026-11-27T18:00:00",
    });
  });

  it("lists this thread's events only, and cancels by id", async () => {
    const { home, tool: t } = tool();
    await t.execute("c1", {
      action: "create",
      type: "periodic",
      text: "standup",
      schedule: "0 9 * * 1-5",
      id: "standup",
    });
    await t.execute("c2", {
      action: "create",
      type: "periodic",
      text: "elsewhere",
      schedule: "0 9 * * *",
      id: "other",
      threadId: "slack:C1:1",
    });
    const listed = text(await t.execute("c3", { action: "list" }));
    expect(listed).toMatch(
      /^standup {2}periodic {2}0 9 \* \* 1-5 {2}next: 2026-11-30 09:00:00 Europe\/Berlin/,
    );
    expect(listed).not.toContain("other");
    expect(text(await t.execute("c4", { action: "cancel", id: "standup" }))).toBe(
      "Cancelled event standup.",
    );
    expect(existsSync(join(home, "events", "standup.json"))).toBe(false);
    expect(text(await t.execute("c5", { action: "list" }))).toBe(
      "No scheduled events for this conversation.",
    );
  });

  it("refuses what would not fire, naming the problem", async () => {
    const { tool: t } = tool();
    await expect(
      t.execute("c1", {
        action: "create",
        type: "one-shot",
        text: "x",
        schedule: "2026-11-27T09:00:00",
      }),
    ).rejects.toThrow(
      /"schedule" 2026-11-27T09:00:00 is in the past \(now: 2026-11-27 09:14:00 Europe\/Berlin\)/,
    );
    await expect(
      t.execute("c2", { action: "create", type: "periodic", text: "x", schedule: "every day" }),
    ).rejects.toThrow(/5 fields, or 6/);
    await expect(t.execute("c3", { action: "create", text: "x" })).rejects.toThrow(
      /create needs "type"/,
    );
    await expect(t.execute("c4", { action: "cancel", id: "nope" })).rejects.toThrow(
      /no event with id "nope"/,
    );
    await t.execute("c5", { action: "create", type: "immediate", text: "x", id: "dup" });
    await expect(
      t.execute("c6", { action: "create", type: "immediate", text: "y", id: "dup" }),
    ).rejects.toThrow(/exists/);
  });
});
