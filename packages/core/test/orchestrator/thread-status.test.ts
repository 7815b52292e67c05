import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Store } from "../../src/store/create-store.js";
import { recordingHandle, until, useOrchestratorHarness } from "./harness.js";

describe("thread status", () => {
  const h = useOrchestratorHarness();

  it("keeps a thread's figures and last activity for status after a restart, without loading its agent", async () => {
    const first = await h.started({
      idleTimeoutMs: 40,
      createRunner: (id) => h.runnerFor(id, { tools: [] }),
    });
    const idle = recordingHandle("test:c:went-idle");
    const busy = recordingHandle("test:c:still-loaded");
    first.send(idle.handle.threadId, { type: "prompt", text: "one", thread: idle.handle });
    await until(() => idle.finals().length === 1);
    await until(() => first.status(idle.handle.threadId).state === "inactive");
    const idleBefore = first.status(idle.handle.threadId);
    await first.shutdown(0);
    // This one is still loaded at shutdown: its figures are saved then.
    const second = await h.started({ createRunner: (id) => h.runnerFor(id, { tools: [] }) });
    second.send(busy.handle.threadId, { type: "prompt", text: "two", thread: busy.handle });
    await until(() => busy.finals().length === 1);
    const busyBefore = second.status(busy.handle.threadId);
    expect(busyBefore).toMatchObject({ state: "idle", messages: 2 });
    await second.shutdown(0);

    let created = 0;
    const third = await h.started({
      createRunner: (id) => {
        created++;
        return h.runnerFor(id, { tools: [] });
      },
    });
    for (const before of [idleBefore, busyBefore]) {
      const after = third.status(before.threadId);
      expect(after).toMatchObject({
        state: "inactive",
        lastActivity: before.lastActivity,
        messages: 2,
        contextTokens: before.contextTokens,
        contextWindow: 100_000,
        cost: before.cost,
      });
      expect(after.contextTokens).toBeGreaterThan(0);
    }
    expect(third.threads().map((s) => [s.threadId, s.messages])).toEqual([
      ["test:c:still-loaded", 2],
      ["test:c:went-idle", 2],
    ]);
    expect(created).toBe(0);

    // A reset starts the figures over, for the status that outlives the process too.
    await third.reset(idle.handle.threadId);
    expect(third.status(idle.handle.threadId)).toMatchObject({ messages: 0, contextTokens: 0 });
    await third.shutdown(0);
    const fourth = h.make();
    expect(fourth.status(idle.handle.threadId)).toMatchObject({ messages: 0, contextTokens: 0 });
    expect(fourth.status(busy.handle.threadId).messages).toBe(2);
    expect(created).toBe(0);
  });

  it("keeps an idle thread's actor, figures and all, when its status.json could not be written", async () => {
    const failing: Store = {
      ...h.store,
      saveStatus: () => {
        throw new Error("ENOSPC: no space left on device");
      },
    };
    const o = await h.started({
      store: failing,
      idleTimeoutMs: 40,
      createRunner: (id) => h.runnerFor(id, { tools: [] }),
    });
    const t = recordingHandle("test:c:full-disk");
    o.send(t.handle.threadId, { type: "prompt", text: "hello", thread: t.handle });
    await until(() => t.finals().length === 1);
    await until(() => o.counters().loadedRunners === 0);
    expect(o.counters().activeActors).toBe(1);
    expect(o.status(t.handle.threadId)).toMatchObject({ state: "inactive", messages: 2 });
  });

  it("says where the tools run for every thread, loaded or not, when it was told", async () => {
    const o = await h.started({
      sandbox: "bubblewrap (workspace rw, home hidden)",
      createRunner: (id) => h.runnerFor(id, { tools: [] }),
    });
    const t = recordingHandle("test:c:confined");
    expect(o.status(t.handle.threadId).sandbox).toBe("bubblewrap (workspace rw, home hidden)");
    o.send(t.handle.threadId, { type: "prompt", text: "hello", thread: t.handle });
    await until(() => t.finals().length === 1);
    expect(o.status(t.handle.threadId)).toMatchObject({
      state: "idle",
      sandbox: "bubblewrap (workspace rw, home hidden)",
    });
    expect(o.threads().map((s) => s.sandbox)).toEqual(["bubblewrap (workspace rw, home hidden)"]);
    // Not told: no sandbox field at all (an embedder that does not use one).
    expect("sandbox" in h.make().status("test:c:other")).toBe(false);
  });

  it("keeps a bounded number of saved statuses read, however many ids are looked up", async () => {
    const reads = new Map<string, number>();
    const counting: Store = {
      ...h.store,
      readStatus: (threadId) => {
        reads.set(threadId, (reads.get(threadId) ?? 0) + 1);
        return undefined;
      },
    };
    const o = h.make({ store: counting });
    o.status("test:c:first");
    o.status("test:c:first");
    expect(reads.get("test:c:first")).toBe(1);
    for (let i = 0; i < 70_000; i++) o.status(`test:c:n${i}`);
    o.status("test:c:first");
    expect(reads.get("test:c:first")).toBe(2);
  });

  it("ignores a status.json that is not one, and writes none for a thread whose directory is gone", async () => {
    const o = await h.started({
      idleTimeoutMs: 40,
      createRunner: (id) => h.runnerFor(id, { tools: [] }),
    });
    const t = recordingHandle("test:c:odd");
    const id = t.handle.threadId;
    mkdirSync(h.store.threadDir(id), { recursive: true });
    writeFileSync(
      join(h.store.threadDir(id), "status.json"),
      '{"lastActivity":"2026-01-02T03:04:05.000Z","messages":"many","contextTokens":1}',
    );
    expect(o.status(id)).toMatchObject({ state: "inactive", messages: 0 });
    expect(o.status(id).lastActivity).toBeUndefined();

    o.send(id, { type: "prompt", text: "hello", thread: t.handle });
    await until(() => t.finals().length === 1);
    // Removed by hand while loaded: going idle does not bring the directory back.
    rmSync(h.store.threadDir(id), { recursive: true });
    await until(() => o.status(id).state === "inactive");
    expect(existsSync(h.store.threadDir(id))).toBe(false);
  });
});
