import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ThreadHeldError } from "../../src/orchestrator/create-orchestrator.js";
import { recordingHandle, until, useOrchestratorHarness } from "./harness.js";

describe("create orchestrator: routing", () => {
  const h = useOrchestratorHarness();

  it("takes the spellings of one thread id as one thread: one actor, one queue, one order", async () => {
    const o = await h.started({ maxConcurrent: 4 });
    const t = recordingHandle("test:c:default");
    // "test:c" leaves the thread part out: it is the thread "default" of channel c, one directory.
    expect(o.send("test:c", { type: "prompt", text: "first", thread: t.handle })).toMatchObject({
      status: "queued",
      position: 0,
    });
    expect(
      o.send("test:c:default", { type: "prompt", text: "second", thread: t.handle }),
    ).toMatchObject({ status: "queued", position: 1 });
    await until(() => t.finals().length === 2);
    expect(h.store.readLog("test:c:default").map((e) => e.text)).toEqual([
      "first",
      "re: first",
      "second",
      "re: second",
    ]);
    // Listed once, under the spelling it was first addressed by.
    expect(o.threads().map((s) => s.threadId)).toEqual(["test:c"]);
    expect(o.status("test:c:default")).toMatchObject({ threadId: "test:c", messages: 4 });
  });

  it("names a thread as its channel does: a channel's prompt renames an actor the API started", async () => {
    const made: string[] = [];
    const o = await h.started({
      createRunner: (id) => {
        made.push(id);
        return h.runnerFor(id);
      },
    });
    const logged = () => h.store.readLog("test:chat:default").length;
    // The API posts first, under the spelling GET /v1/threads lists (no handle: no channel).
    o.send("test:chat:default", { type: "prompt", text: "from the api" });
    await until(() => logged() === 2 && o.status("test:chat").state === "idle");
    expect(made).toEqual(["test:chat:default"]);
    // Its channel's prompt names it "test:chat" (as Telegram names a chat): a new runner, by that id.
    const t = recordingHandle("test:chat");
    o.send("test:chat", { type: "prompt", text: "hello", thread: t.handle });
    await until(() => t.finals().length === 1);
    expect(made).toEqual(["test:chat:default", "test:chat"]);
    expect(o.status("test:chat:default").threadId).toBe("test:chat");
    // The API again: the same actor, its name and runner kept.
    o.send("test:chat:default", { type: "prompt", text: "the api again" });
    await until(() => logged() === 6 && o.status("test:chat").state === "idle");
    expect(made).toEqual(["test:chat:default", "test:chat"]);
    expect(o.threads().map((s) => s.threadId)).toEqual(["test:chat"]);
    // One conversation throughout: each run saw the ones before it.
    expect(h.store.loadContext("test:chat")).toHaveLength(6);
  });

  it("refuses send, reset and compact of a thread another process holds (heldElsewhere), and runs the others", async () => {
    const reason = "open in guppy chat";
    const o = await h.started({
      heldElsewhere: (id) => (id.startsWith("cli:") ? reason : undefined),
    });
    const held = "cli:local:default";
    expect(o.send(held, { type: "prompt", text: "hi" })).toEqual({
      status: "refused",
      reason,
      heldElsewhere: true,
    });
    expect(o.send(held, { type: "abort" })).toMatchObject({
      status: "refused",
      heldElsewhere: true,
    });
    await expect(o.reset(held)).rejects.toThrow(ThreadHeldError);
    await expect(o.compact(held)).rejects.toThrow(reason);
    expect(o.counters().accepted).toBe(0);
    expect(existsSync(h.store.threadDir(held))).toBe(false);
    const t = recordingHandle("test:c:free");
    expect(
      o.send(t.handle.threadId, { type: "prompt", text: "free", thread: t.handle }).status,
    ).toBe("queued");
    await until(() => t.finals().length === 1);
  });
});
