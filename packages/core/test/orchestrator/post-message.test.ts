import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import { describe, expect, it } from "vitest";
import type { OrchestratorEvent } from "../../src/orchestrator/types.js";
import type { ThreadHandle } from "../../src/types.js";
import { recordingHandle, until, useOrchestratorHarness } from "./harness.js";

describe("Orchestrator.postMessage (the send_message tool's way out)", () => {
  const h = useOrchestratorHarness();

  it("posts through the thread's handle, logs it as guppy's and tells the subscribers", async () => {
    const o = await h.started();
    const posted: string[] = [];
    o.registerChannel({
      adapterId: "chat",
      threadHandle: (threadId): ThreadHandle => ({
        threadId,
        notice: () => {},
        post: (text) => {
          posted.push(text);
        },
      }),
    });
    const events: OrchestratorEvent[] = [];
    o.subscribe((e) => events.push(e));
    const result = await o.postMessage({ threadId: "chat:room" }, "hello room", "chat:other:t");
    expect(result).toEqual({ status: "posted", threadId: "chat:room:default" });
    expect(posted).toEqual(["hello room"]);
    expect(events).toContainEqual({
      type: "message",
      threadId: "chat:room:default",
      text: "hello room",
      from: "chat:other:t",
    });
    expect(h.store.readLog("chat:room")).toEqual([
      expect.objectContaining({ isBot: true, text: "hello room", sentFrom: "chat:other:t" }),
    ]);
  });

  it("falls back to the handle's notice, and marks nothing as sent from the thread itself", async () => {
    const o = await h.started();
    const t = recordingHandle("plain:c:t");
    o.registerChannel({ adapterId: "plain", threadHandle: () => t.handle });
    await o.postMessage({ threadId: "plain:c:t" }, "progress", "plain:c:t");
    expect(t.notices).toEqual(["progress"]);
    expect(h.store.readLog("plain:c:t")[0]?.sentFrom).toBeUndefined();
  });

  it("opens a thread in a channel through its link, and refuses what it cannot reach", async () => {
    const o = await h.started();
    o.registerChannel({
      adapterId: "chat",
      threadHandle: (threadId) => ({ threadId, notice: () => {} }),
      postToChannel: async (channelId, text) => `chat:${channelId}:${text.length}`,
    });
    expect(await o.postMessage({ adapterId: "chat", channelId: "news" }, "fresh")).toEqual({
      status: "posted",
      threadId: "chat:news:5",
    });
    expect(h.store.readLog("chat:news:5").map((e) => e.text)).toEqual(["fresh"]);
    const none = await o.postMessage({ adapterId: "nope", channelId: "x" }, "lost");
    expect(none).toMatchObject({ status: "failed", reason: expect.stringContaining('"nope"') });
    const unknown = await o.postMessage({ threadId: "ghost:c:t" }, "lost");
    expect(unknown).toMatchObject({ status: "failed", reason: expect.stringContaining("ghost") });
    const invalid = await o.postMessage({ threadId: "NOT VALID" }, "lost");
    expect(invalid).toMatchObject({ status: "failed", reason: expect.stringContaining("Invalid") });
  });

  it("brings a message sent from another thread into the target's context before its next run", async () => {
    const o = await h.started();
    o.registerChannel({ adapterId: "chat", threadHandle: (id) => ({ threadId: id, notice() {} }) });
    const t = recordingHandle("chat:c:target");
    o.send("chat:c:target", { type: "prompt", text: "first", thread: t.handle });
    await until(() => t.finals().length === 1);
    await o.postMessage({ threadId: "chat:c:target" }, "note from elsewhere", "chat:c:source");
    let seen = "";
    h.faux.setResponses([
      (context) => {
        seen = JSON.stringify(context.messages);
        return fauxAssistantMessage("ok");
      },
    ]);
    o.send("chat:c:target", { type: "prompt", text: "second", thread: t.handle });
    await until(() => t.finals().length === 2);
    expect(seen).toContain("note from elsewhere");
    expect(seen).toContain("from thread chat:c:source");
  });
});
