import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createEventCalls } from "../../../src/channels/http/event-calls.js";

const root = mkdtempSync(join(tmpdir(), "guppy-event-calls-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("the HTTP backend's event calls", () => {
  it("add, list with the next run in GUPPY_TIMEZONE, edit and remove the files", async () => {
    const calls = createEventCalls({ dir: join(root, "events"), timezone: "Asia/Tokyo" });
    expect(await calls.listEvents()).toEqual({ events: [] });
    const added = await calls.changeEvent({
      action: "add",
      id: "tea",
      fields: { type: "periodic", text: "tea", threadId: "http:api:x", schedule: "0 15 * * *" },
    });
    if (!added.ok) throw new Error(added.problem);
    // 15:00 in Tokyo (no daylight saving) is 06:00 UTC.
    expect(new Date(added.nextRun ?? 0).getUTCHours()).toBe(6);
    const listing = await calls.listEvents();
    expect(listing?.events).toEqual([{ event: added.event, nextRun: added.nextRun }]);
    const edited = await calls.changeEvent({
      action: "edit",
      id: "tea",
      fields: { timezone: "UTC" },
    });
    expect(edited.ok && new Date(edited.nextRun ?? 0).getUTCHours()).toBe(15);
    expect(await calls.removeEvent("tea")).toBe(true);
    expect(await calls.removeEvent("tea")).toBe(false);
  });

  it("without an events folder configured, says so instead of writing anywhere", async () => {
    const calls = createEventCalls(undefined);
    expect(await calls.listEvents()).toBeUndefined();
    expect(
      await calls.changeEvent({ action: "add", fields: { type: "immediate", text: "t" } }),
    ).toMatchObject({ ok: false, reason: "unavailable" });
    expect(await calls.removeEvent("x")).toBe(false);
  });
});
