import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import { describe, expect, it } from "vitest";
import { INBOX_FILE } from "../../src/inbox/create-inbox.js";
import type { OrchestratorEvent } from "../../src/orchestrator/types.js";
import {
  recordingHandle,
  reportOf,
  script,
  stoppableSummary,
  until,
  useOrchestratorHarness,
} from "./harness.js";

describe("thread actor", () => {
  const h = useOrchestratorHarness();

  describe("queue", () => {
    it("answers 'busy' over the queue depth, counts it, and still runs what was queued", async () => {
      const o = await h.started({ queueDepth: 2 });
      const t = recordingHandle("test:c:busy");
      const id = t.handle.threadId;
      expect(o.send(id, { type: "prompt", text: "gate first", thread: t.handle }).status).toBe(
        "queued",
      );
      await h.gate.entered();
      expect(o.send(id, { type: "prompt", text: "q1", thread: t.handle })).toMatchObject({
        status: "queued",
        position: 1,
      });
      expect(o.send(id, { type: "prompt", text: "q2", thread: t.handle }).status).toBe("queued");
      expect(o.send(id, { type: "prompt", text: "q3", thread: t.handle })).toEqual({
        status: "busy",
        queued: 2,
      });
      expect(t.notices.some((n) => /already has 2 messages waiting/.test(n))).toBe(true);
      expect(o.counters().busy).toBe(1);
      expect(o.status(id)).toMatchObject({ state: "running", queued: 2 });
      h.gate.open();
      await until(() => t.finals().length === 3);
      expect(h.requests).not.toContain("q3");
      expect(h.requests.filter((r) => r === "q1" || r === "q2")).toEqual(["q1", "q2"]);
    });

    it("counts a prompt waiting for its concurrency slot as queued, for the depth as for status", async () => {
      const o = await h.started({ maxConcurrent: 1, queueDepth: 2 });
      const a = recordingHandle("test:c:depth-a");
      const b = recordingHandle("test:c:depth-b");
      const id = b.handle.threadId;
      o.send(a.handle.threadId, { type: "prompt", text: "gate a1", thread: a.handle });
      await h.gate.entered();
      // a holds the only slot: b1 waits for it, b2 behind b1 — two of b's prompts wait.
      expect(o.send(id, { type: "prompt", text: "b1", thread: b.handle })).toMatchObject({
        status: "queued",
        position: 0,
      });
      expect(o.status(id)).toMatchObject({ state: "waiting", queued: 1 });
      expect(o.send(id, { type: "prompt", text: "b2", thread: b.handle })).toMatchObject({
        status: "queued",
        position: 1,
      });
      expect(o.send(id, { type: "prompt", text: "b3", thread: b.handle })).toEqual({
        status: "busy",
        queued: 2,
      });
      expect(b.notices).toEqual([expect.stringContaining("already has 2 messages waiting")]);
      // What the busy answer said is what the status (and GET /v1/threads) says.
      expect(o.status(id)).toMatchObject({ state: "waiting", queued: 2 });
      expect(o.threads().find((t) => t.threadId === id)).toMatchObject({
        state: "waiting",
        queued: 2,
      });
      h.gate.open();
      await until(() => b.finals().length === 2);
      expect(h.requests).not.toContain("b3");
      await until(() => o.status(id).state === "idle");
      expect(o.status(id).queued).toBe(0);
    });

    it.each([
      ["an idle thread", true],
      ["a new thread", false],
    ])(
      "queues a burst of two to %s in one turn with a queue depth of 1: the first has its slot, it does not wait",
      async (_name, loaded) => {
        const o = h.make({ queueDepth: 1 });
        const starts: string[] = [];
        o.subscribe((e: OrchestratorEvent) => {
          if (e.type === "runner" && e.event.type === "run_start") starts.push(e.event.text);
        });
        await o.start();
        const t = recordingHandle(`test:c:burst-${loaded ? "idle" : "new"}`);
        const id = t.handle.threadId;
        if (loaded) {
          o.send(id, { type: "prompt", text: "warm up", thread: t.handle });
          await until(() => o.status(id).state === "idle");
        }
        const done = t.finals().length;
        // One getUpdates batch, handed over in one turn: a slot is free, so the first is not waiting.
        const send = (text: string) => o.send(id, { type: "prompt", text, thread: t.handle });
        expect(send("gate first")).toMatchObject({ status: "queued", position: 0 });
        expect(send("second")).toMatchObject({ status: "queued", position: 1 });
        // The status says so too: one queued; the first has its slot, its run not begun yet.
        expect(o.status(id)).toMatchObject({ state: "waiting", queued: 1 });
        // The depth holds behind it: one waits already.
        expect(send("third")).toEqual({ status: "busy", queued: 1 });
        expect(t.notices).toEqual([expect.stringContaining("already has 1 message waiting")]);
        await h.gate.entered();
        h.gate.open();
        await until(() => t.finals().length === done + 2);
        expect(starts.filter((r) => r !== "warm up")).toEqual(["gate first", "second"]);
      },
    );
  });

  describe("steer and abort", () => {
    it("steers and aborts the running agent, bypassing the queue; queued prompts still run", async () => {
      const o = await h.started();
      const t = recordingHandle("test:c:steer");
      const id = t.handle.threadId;
      expect(o.send(id, { type: "steer", text: "nothing yet", thread: t.handle })).toEqual({
        status: "dropped",
        reason: "nothing is running",
      });
      expect(t.notices.at(-1)).toMatch(/nothing to steer/);
      // Neither leaves an actor behind for a thread it found inactive (no message id to keep).
      expect(o.send("test:c:other", { type: "abort" }).status).toBe("dropped");
      expect(o.counters().activeActors).toBe(0);
      o.send(id, { type: "prompt", text: "gate please", thread: t.handle });
      o.send(id, { type: "prompt", text: "after abort", thread: t.handle });
      await h.gate.entered();
      expect(o.send(id, { type: "steer", text: "also mention cats" })).toEqual({
        status: "delivered",
      });
      expect(o.send(id, { type: "abort" })).toEqual({ status: "delivered" });
      await until(() => t.finals().length === 2);
      const [first, second] = t.finals();
      expect(first).toMatchObject({ stopReason: "aborted" });
      expect(second).toMatchObject({ stopReason: "stop", text: "re: after abort" });
      expect(o.send(id, { type: "abort" }).status).toBe("dropped");
    });
  });

  describe("idle timeout", () => {
    it("deactivates an idle thread (drops the runner, clears the inbox) and reactivates it with its context", async () => {
      let created = 0;
      const model = `${h.faux.getModel().provider}/${h.faux.getModel().id}`;
      const o = await h.started({
        idleTimeoutMs: 40,
        modelName: model,
        createRunner: (threadId) => {
          created++;
          return h.runnerFor(threadId, { tools: [] });
        },
      });
      const t = recordingHandle("test:c:idle");
      const id = t.handle.threadId;
      o.send(id, { type: "prompt", text: "remember 42", thread: t.handle });
      await until(() => t.finals().length === 1);
      expect(o.status(id).state).toBe("idle");
      expect(o.status(id).model).toBe(model);
      const journal = () => readFileSync(join(h.home, INBOX_FILE), "utf8");
      expect(journal()).toContain('"text":"remember 42"');
      expect(journal()).not.toContain('"t":"cleared"');
      await until(() => o.status(id).state === "inactive");
      expect(o.counters().loadedRunners).toBe(0);
      // Nothing of the thread stays in memory: its figures are read back from its status.json.
      expect(o.counters().activeActors).toBe(0);
      expect(o.status(id).lastActivity).toBeDefined();
      // Every prompt of the thread was answered and its log cursor saved: the journal says so.
      expect(journal()).toContain(`{"t":"cleared","threadId":"${id}"}`);
      expect(o.status(id).messages).toBe(2);
      expect(o.status(id).model).toBe(model); // the same, loaded or not
      o.send(id, { type: "prompt", text: "what was it?", thread: t.handle });
      await until(() => t.finals().length === 2);
      expect(created).toBe(2);
      expect(h.store.loadContext(id)).toHaveLength(4);
    });

    it("starts an idle thread afresh when its directory was deleted while it was inactive", async () => {
      const o = await h.started({
        idleTimeoutMs: 40,
        createRunner: (id) => h.runnerFor(id, { tools: [] }),
      });
      const t = recordingHandle("test:c:removed");
      const id = t.handle.threadId;
      o.send(id, { type: "prompt", text: "first", thread: t.handle });
      await until(() => t.finals().length === 1);
      await until(() => o.status(id).state === "inactive");
      // The user resets the thread by hand: its directory goes, files and all.
      rmSync(h.store.threadDir(id), { recursive: true });
      o.send(id, { type: "prompt", text: "second", thread: t.handle });
      await until(() => t.finals().length === 2);
      expect(t.finals()[1]).toMatchObject({ stopReason: "stop", text: "re: second" });
      expect(h.store.loadContext(id)).toHaveLength(2);
      expect(h.store.readLog(id).map((e) => e.text)).toEqual(["second", "re: second"]);
    });
  });

  describe("/compact and /new", () => {
    it("reports the context engine's figures in status and compacts on request", async () => {
      const o = await h.started({
        createRunner: (threadId) =>
          h.runnerFor(threadId, { tools: [], compactKeepRecentTokens: 10 }),
      });
      const t = recordingHandle("test:c:compact");
      for (const text of ["one", "two", "three", "four"]) {
        o.send(t.handle.threadId, { type: "prompt", text, thread: t.handle });
      }
      await until(() => t.finals().length === 4);
      const before = o.status(t.handle.threadId);
      expect(before.contextWindow).toBe(100_000);
      expect(before.contextTokens).toBeGreaterThan(0);
      expect(before.messages).toBe(8);
      expect(before.compactions).toBe(0);
      const report = await reportOf(o.compact(t.handle.threadId));
      expect(report).toMatch(/^Summarised \d+ older messages?\b.*~[\d,]+ → ~[\d,]+ tokens/);
      const after = o.status(t.handle.threadId);
      expect(after.compactions).toBe(1);
      expect(after.messages).toBeLessThan(before.messages);
    });

    it("unloads a runner that /compact or /new loaded on an inactive thread at the idle timeout", async () => {
      const { o, id } = await h.threadWithHistory("commands", { idleTimeoutMs: 40 });
      await until(() => o.counters().activeActors === 0);

      expect(await reportOf(o.compact(id))).toMatch(/^Summarised /);
      expect(o.status(id)).toMatchObject({ state: "idle", compactions: 1 });
      await until(() => o.counters().activeActors === 0);
      expect(o.counters().loadedRunners).toBe(0);
      expect(o.status(id)).toMatchObject({ state: "inactive", compactions: 1 });

      await o.reset(id);
      expect(o.status(id)).toMatchObject({ messages: 0, compactions: 0 });
      await until(() => o.counters().activeActors === 0);
    });

    it("keeps a thread active while /compact runs, and runs a prompt sent meanwhile after it", async () => {
      const { o, t, id } = await h.threadWithHistory("slow-summary", { idleTimeoutMs: 40 });
      // The idle timeout (40 ms) is running; the summary takes longer than that.
      h.faux.setResponses([
        async () => {
          await new Promise((r) => setTimeout(r, 150));
          return fauxAssistantMessage("a summary");
        },
        script,
      ]);
      const compaction = reportOf(o.compact(id));
      await new Promise((r) => setTimeout(r, 20));
      // A prompt sent meanwhile waits for the compaction instead of failing on a busy runner.
      o.send(id, { type: "prompt", text: "four", thread: t.handle });
      expect(await compaction).toMatch(/^Summarised /);
      await until(() => t.finals().length === 4);
      expect(t.finals()[3]).toMatchObject({ stopReason: "stop", text: "re: four" });
      expect(o.status(id)).toMatchObject({ state: "idle", compactions: 1 });
      expect(o.counters().activeActors).toBe(1);
      await until(() => o.counters().activeActors === 0);
      expect(o.status(id)).toMatchObject({ state: "inactive", compactions: 1 });

      // /stop reaches a compaction under way: its summary request is cancelled.
      h.faux.setResponses([stoppableSummary]);
      const stopped = reportOf(o.compact(id));
      await new Promise((r) => setTimeout(r, 20));
      const t0 = Date.now();
      expect(o.send(id, { type: "abort" })).toEqual({ status: "delivered" });
      expect(await stopped).toBe("Compaction stopped; the context is as it was.");
      expect(Date.now() - t0).toBeLessThan(10_000);
      expect(o.status(id).compactions).toBe(1);

      // /new sent while a compaction runs waits for it rather than failing.
      h.faux.setResponses([
        async () => {
          await new Promise((r) => setTimeout(r, 100));
          return fauxAssistantMessage("another summary");
        },
      ]);
      const again = reportOf(o.compact(id));
      await new Promise((r) => setTimeout(r, 20));
      const reset = await o.reset(id);
      expect(await again).toMatch(/^Summarised /);
      expect(reset.status === "reset" ? reset.archived : undefined).toMatch(/context-.*\.jsonl$/);
      expect(o.status(id)).toMatchObject({ messages: 0, compactions: 0 });
    });
  });

  describe("a message delivered again", () => {
    it("drops a prompt whose message id the thread has accepted: queued, answered, after a restart, after its inbox was cleared", async () => {
      const id = "test:c:again";
      const t = recordingHandle(id);
      const prompt = (text: string, messageId: string) =>
        ({ type: "prompt", text, messageId, thread: t.handle }) as const;
      const o = await h.started({ idleTimeoutMs: 40 });
      expect(o.send(id, prompt("gate first", "m1")).status).toBe("queued");
      await h.gate.entered();
      // Delivered again while it runs, and while it is still queued.
      expect(o.send(id, prompt("gate first", "m1"))).toEqual({ status: "duplicate" });
      expect(o.send(id, prompt("second", "m2")).status).toBe("queued");
      expect(o.send(id, prompt("second", "m2"))).toEqual({ status: "duplicate" });
      h.gate.open();
      await until(() => t.finals().length === 2);
      expect(o.send(id, prompt("gate first", "m1"))).toEqual({ status: "duplicate" });
      // After a restart (the inbox still lists the answered prompts) ...
      await o.shutdown(0);
      const next = await h.started({ idleTimeoutMs: 40 });
      expect(next.send(id, prompt("second", "m2"))).toEqual({ status: "duplicate" });
      // An actor made only to find that holds nothing.
      expect(next.counters().activeActors).toBe(0);
      // ... and once the thread ran again, went idle and had its inbox cleared (its log says so).
      expect(next.send(id, prompt("third", "m3")).status).toBe("queued");
      await until(() => t.finals().length === 3);
      await until(() => next.counters().activeActors === 0);
      expect(readFileSync(join(h.home, INBOX_FILE), "utf8")).toContain('"t":"cleared"');
      await next.shutdown(0);
      const third = await h.started();
      expect(third.send(id, prompt("gate first", "m1"))).toEqual({ status: "duplicate" });
      expect(third.send(id, prompt("third", "m3"))).toEqual({ status: "duplicate" });
      expect(third.send(id, prompt("fourth", "m4")).status).toBe("queued");
      await until(() => t.finals().length === 4);
      // Each message ran once; nothing was said about the ones dropped.
      const asked = h.store
        .readLog(id)
        .filter((e) => !e.isBot)
        .map((e) => e.messageId);
      expect(asked).toEqual(["m1", "m2", "m3", "m4"]);
      expect(t.notices).toEqual([]);
    });

    it("does not archive twice for a /new delivered again, also after a restart", async () => {
      const { o, t, id } = await h.threadWithHistory("new-again");
      expect(await o.reset(id, "n1")).toMatchObject({ status: "reset" });
      o.send(id, { type: "prompt", text: "after new", messageId: "m9", thread: t.handle });
      await until(() => t.finals().length === 4);
      expect(await o.reset(id, "n1")).toEqual({ status: "duplicate" });
      expect(o.status(id).messages).toBe(2);
      await o.shutdown(0);
      const next = await h.started();
      expect(await next.reset(id, "n1")).toEqual({ status: "duplicate" });
      expect(h.store.loadContext(id)).toHaveLength(2);
      expect(await next.reset(id, "n2")).toMatchObject({ status: "reset" });
      expect(h.store.loadContext(id)).toHaveLength(0);
    });

    it("acts once on a steer or abort delivered again: no second steer, no later run stopped, also after a restart", async () => {
      const id = "test:c:commands-again";
      const t = recordingHandle(id);
      const prompt = (text: string, messageId: string) =>
        ({ type: "prompt", text, messageId, thread: t.handle }) as const;
      const steer = { type: "steer", text: "mention cats", messageId: "s1" } as const;
      const abort = (messageId: string) => ({ type: "abort", messageId }) as const;
      /** The steered text in the thread's context: once per steer that reached the run. */
      const steered = () =>
        h.store
          .loadContext(id)
          .filter((m) => m.role === "user" && JSON.stringify(m.content).includes("mention cats"));
      const o = await h.started();
      // A /stop with nothing running is dropped, and remembered like one that stopped a run.
      expect(o.send(id, abort("a0"))).toMatchObject({ status: "dropped" });
      expect(o.send(id, prompt("gate one", "m1")).status).toBe("queued");
      await h.gate.entered();
      expect(o.send(id, steer)).toEqual({ status: "delivered" });
      expect(o.send(id, steer)).toEqual({ status: "duplicate" });
      expect(o.send(id, abort("a0"))).toEqual({ status: "duplicate" });
      h.gate.open();
      await until(() => t.finals().length === 1);
      expect(t.finals()[0]).toMatchObject({ stopReason: "stop" });
      expect(steered()).toHaveLength(1);

      h.gate.reset();
      o.send(id, prompt("gate two", "m2"));
      await h.gate.entered();
      expect(o.send(id, abort("a1"))).toEqual({ status: "delivered" });
      await until(() => t.finals().length === 2);
      expect(t.finals()[1]).toMatchObject({ stopReason: "aborted" });
      // Delivered again while a later run runs: that run goes on.
      h.gate.reset();
      o.send(id, prompt("gate three", "m3"));
      await h.gate.entered();
      expect(o.send(id, abort("a1"))).toEqual({ status: "duplicate" });
      expect(o.send(id, steer)).toEqual({ status: "duplicate" });
      h.gate.open();
      await until(() => t.finals().length === 3);
      expect(t.finals()[2]).toMatchObject({ stopReason: "stop" });

      // After a restart the inbox journal knows them: an actor made only to find that holds nothing.
      await o.shutdown(0);
      const next = await h.started();
      expect(next.send(id, abort("a1"))).toEqual({ status: "duplicate" });
      expect(next.counters().activeActors).toBe(0);
      h.gate.reset();
      next.send(id, prompt("gate four", "m4"));
      await h.gate.entered();
      for (const messageId of ["a0", "a1"]) {
        expect(next.send(id, abort(messageId))).toEqual({ status: "duplicate" });
      }
      expect(next.send(id, steer)).toEqual({ status: "duplicate" });
      h.gate.open();
      await until(() => t.finals().length === 4);
      expect(t.finals()[3]).toMatchObject({ stopReason: "stop" });
      expect(steered()).toHaveLength(1);
      // A new one still acts.
      expect(next.send(id, abort("a2"))).toMatchObject({ status: "dropped" });
    });

    it("does not compact twice for a /compact delivered again, also after a restart", async () => {
      const { o, id } = await h.threadWithHistory("compact-again");
      expect(await reportOf(o.compact(id, "c1"))).toMatch(/^Summarised /);
      expect(await reportOf(o.compact(id, "c1"))).toBe("duplicate");
      expect(o.status(id).compactions).toBe(1);
      await o.shutdown(0);
      const next = await h.started({
        createRunner: (threadId) =>
          h.runnerFor(threadId, { tools: [], compactKeepRecentTokens: 10 }),
      });
      expect(await reportOf(next.compact(id, "c1"))).toBe("duplicate");
      expect(next.counters()).toMatchObject({ activeActors: 0, loadedRunners: 0 });
      expect(next.status(id).compactions).toBe(1);
    });
  });
});
