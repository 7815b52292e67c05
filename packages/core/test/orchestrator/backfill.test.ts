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
});
