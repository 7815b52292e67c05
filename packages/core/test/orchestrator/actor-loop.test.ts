import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { INBOX_FILE } from "../../src/inbox/create-inbox.js";
import type { Logger } from "../../src/logging/logger.js";
import type { OrchestratorEvent } from "../../src/orchestrator/types.js";
import { createStore } from "../../src/store/create-store.js";
import { fakeFullDisk } from "../helpers/full-disk.js";
import { recordingHandle, until, useOrchestratorHarness } from "./harness.js";

describe("orchestrator's actor loop: one prompt's run", () => {
  const h = useOrchestratorHarness();

  it("answers every prompt of a thread in order, one run at a time", async () => {
    const o = await h.started();
    const t = recordingHandle("test:c:order");
    for (const text of ["one", "two", "three"]) {
      expect(o.send(t.handle.threadId, { type: "prompt", text, thread: t.handle }).status).toBe(
        "queued",
      );
    }
    await until(() => t.finals().length === 3);
    expect(t.finals().map((e) => (e.type === "run_end" ? e.text : ""))).toEqual([
      "re: one",
      "re: two",
      "re: three",
    ]);
    // The third run saw the first two exchanges: one agent, one context.
    expect(h.store.loadContext(t.handle.threadId).filter((m) => m.role === "user")).toHaveLength(3);
  });

  it("writes a deferred prompt's accepted line before its run starts, also when it starts at once", async () => {
    const journalAtStart: string[] = [];
    const o = await h.started({
      createRunner: (threadId) => {
        const runner = h.runnerFor(threadId, { tools: [] });
        return {
          ...runner,
          prompt: (input) => {
            journalAtStart.push(readFileSync(join(h.home, INBOX_FILE), "utf8"));
            return runner.prompt(input);
          },
        };
      },
    });
    const t = recordingHandle("test:c:deferred");
    // The thread is active (its runner loaded, its files open): the next run starts in the turn
    // its prompt is sent in.
    o.send(t.handle.threadId, { type: "prompt", text: "first", thread: t.handle });
    await until(() => t.finals().length === 1);
    const sent = o.send(t.handle.threadId, {
      type: "prompt",
      text: "now",
      deferSync: true,
      thread: t.handle,
    });
    if (sent.status !== "queued") throw new Error(`not queued: ${sent.status}`);
    await until(() => t.finals().length === 2);
    await sent.synced;
    expect(journalAtStart).toHaveLength(2);
    expect(journalAtStart[1]).toContain(`"id":"${sent.inboxId}"`);
  });

  it("runs a prompt whose content is still being fetched in its place, with that content", async () => {
    const o = await h.started();
    const t = recordingHandle("test:c:content");
    const id = t.handle.threadId;
    let fetched: (content: { text: string }) => void = () => {};
    const content = new Promise<{ text: string }>((resolve) => {
      fetched = resolve;
    });
    const sent = o.send(id, { type: "prompt", text: "photo (saved)", content, thread: t.handle });
    expect(sent.status).toBe("queued");
    o.send(id, { type: "prompt", text: "and translate it", thread: t.handle });
    await new Promise((r) => setTimeout(r, 50));
    // The later prompt waits behind the one whose attachments are still coming.
    expect(h.requests).toEqual([]);
    expect(o.status(id).queued).toBe(2);
    fetched({ text: "photo [attachment saved: /x/p.jpg]" });
    await until(() => t.finals().length === 2);
    expect(h.requests).toEqual(["photo [attachment saved: /x/p.jpg]", "and translate it"]);
    expect(h.store.readLog(id)[0]?.text).toBe("photo [attachment saved: /x/p.jpg]");
  });

  it("limits running agents globally and serves waiting threads first come, first served", async () => {
    const o = h.make({ maxConcurrent: 1 });
    const starts: string[] = [];
    o.subscribe((e: OrchestratorEvent) => {
      if (e.type === "runner" && e.event.type === "run_start") starts.push(e.event.text);
    });
    await o.start();
    const a = recordingHandle("test:c:a");
    const b = recordingHandle("test:c:b");
    o.send(a.handle.threadId, { type: "prompt", text: "gate a1", thread: a.handle });
    await h.gate.entered();
    o.send(a.handle.threadId, { type: "prompt", text: "a2", thread: a.handle });
    o.send(a.handle.threadId, { type: "prompt", text: "a3", thread: a.handle });
    o.send(b.handle.threadId, { type: "prompt", text: "b1", thread: b.handle });
    const c = recordingHandle("test:c:c");
    o.send(c.handle.threadId, { type: "prompt", text: "c1", thread: c.handle });
    expect(o.counters()).toMatchObject({ runningNow: 1, waitingForSlot: 2 });
    h.gate.open();
    await until(() => a.finals().length + b.finals().length + c.finals().length === 5);
    // b and c asked for a slot while a1 ran; a asks again only after a1, so it goes behind them.
    expect(starts).toEqual(["gate a1", "b1", "c1", "a2", "a3"]);
  });

  it("marks a prompt done only once its answer is on disk, when the disk fills during its run", async () => {
    const disk = fakeFullDisk();
    try {
      h.store = createStore({ home: h.home, unsavedRetryMs: 20 });
      const errors: string[] = [];
      const infos: string[] = [];
      const logger: Logger = {
        debug() {},
        info: (m) => infos.push(m),
        warn() {},
        error: (m) => errors.push(m),
      };
      const o = await h.started({ logger });
      const id = "test:c:full";
      const t = recordingHandle(id);
      o.send(id, { type: "prompt", text: "gate, then answer", thread: t.handle });
      await h.gate.entered();
      disk.free = 0;
      h.gate.open();
      await until(() => t.finals().length === 1);
      // The answer was delivered; it could not be saved, and the log says so in one line.
      expect(t.finals()[0]).toMatchObject({ text: "after tool: gate, then answer" });
      expect(errors).toEqual([
        "answer for test:c:full not saved (disk full?); kept pending, retrying",
      ]);
      // Retries while full change nothing: no answer on disk, no done line.
      await new Promise((r) => setTimeout(r, 100));
      const journal = () =>
        readFileSync(join(h.home, INBOX_FILE), "utf8")
          .split("\n")
          .filter((l) => l !== "")
          .map((l) => JSON.parse(l) as { t: string });
      expect(journal().map((l) => l.t)).toEqual(["accepted", "tool"]);
      expect(h.store.readLog(id).filter((e) => e.isBot)).toEqual([]);
      // Room again: the timer writes the kept lines, then the prompt is done.
      disk.free = undefined;
      await until(() => journal().some((l) => l.t === "done"));
      expect(h.store.readLog(id).map((e) => e.text)).toEqual([
        "gate, then answer",
        "after tool: gate, then answer",
      ]);
      expect(h.store.loadContext(id).map((m) => m.role)).toEqual([
        "user",
        "assistant",
        "toolResult",
        "assistant",
      ]);
      expect(infos).toContain("answer for test:c:full saved");
    } finally {
      disk.restore();
    }
  });
});
