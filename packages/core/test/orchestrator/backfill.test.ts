import { describe, expect, it } from "vitest";
import { recordingHandle, until, useOrchestratorHarness } from "./harness.js";

describe("orchestrator's backfill", () => {
  const h = useOrchestratorHarness();

  it("backfills messages logged while no agent ran, in order and deduplicated by id", async () => {
    const o = await h.started();
    const t = recordingHandle("test:c:backfill");
    const id = t.handle.threadId;
    const entry = (messageId: string, text: string) => ({
      date: new Date().toISOString(),
      messageId,
      userId: "u1",
      userName: "alice",
      text,
      isBot: false,
    });
    h.store.appendLog(id, entry("m1", "the door code is 1234"));
    h.store.appendLog(id, entry("m2", "bring snacks"));
    h.store.appendLog(id, entry("m1", "the door code is 1234"));
    h.store.appendLog(id, entry("m3", "what did I say?"));
    o.send(id, { type: "prompt", text: "what did I say?", messageId: "m3", thread: t.handle });
    await until(() => t.finals().length === 1);
    const users = h.store.loadContext(id).filter((m) => m.role === "user");
    expect(users).toHaveLength(2);
    const synced = String(users[0]?.content);
    expect(synced.match(/door code/g)).toHaveLength(1);
    expect(synced.indexOf("door code")).toBeLessThan(synced.indexOf("bring snacks"));
    expect(synced).not.toContain("what did I say?");
    // A second prompt backfills nothing new.
    o.send(id, { type: "prompt", text: "again", thread: t.handle });
    await until(() => t.finals().length === 2);
    expect(h.store.loadContext(id).filter((m) => m.role === "user")).toHaveLength(3);
  });

  it("stamps each backfilled message with the local time it was logged at, in GUPPY_TIMEZONE", async () => {
    const o = await h.started({ timezone: "Asia/Tokyo" });
    const t = recordingHandle("test:c:stamped");
    const id = t.handle.threadId;
    const entry = (messageId: string, date: string, text: string, extra = {}) => ({
      date,
      messageId,
      userId: "u1",
      userName: "alice",
      text,
      isBot: false,
      ...extra,
    });
    h.store.appendLog(id, entry("m1", "2026-11-27T15:05:00.000Z", "see you at midnight"));
    h.store.appendLog(
      id,
      entry("m2", "2026-11-26T23:59:00.000Z", "sent from elsewhere", {
        isBot: true,
        userId: "guppy",
        sentFrom: "test:c:other",
      }),
    );
    h.store.appendLog(id, entry("m3", "not a date", "hand-edited"));
    o.send(id, { type: "prompt", text: "what now?", messageId: "m4", thread: t.handle });
    await until(() => t.finals().length === 1);
    const synced = String(h.store.loadContext(id).find((m) => m.role === "user")?.content);
    const lines = synced.split("\n").slice(1);
    expect(lines).toEqual([
      "[Sat 2026-11-28 00:05 Asia/Tokyo] alice: see you at midnight",
      "[Fri 2026-11-27 08:59 Asia/Tokyo] I (guppy) sent this here from thread test:c:other: sent from elsewhere",
      "[not a date] alice: hand-edited",
    ]);
  });
});
