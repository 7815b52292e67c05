import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { INBOX_FILE } from "../../src/inbox/create-inbox.js";
import type { OrchestratorEvent, RuntimeOrchestrator } from "../../src/orchestrator/types.js";
import { recordingHandle, until, useOrchestratorHarness } from "./harness.js";

describe("replay at start", () => {
  const h = useOrchestratorHarness();

  it("replays the prompts left at a shutdown in the order accepted, across threads", async () => {
    const first = await h.started({ maxConcurrent: 1 });
    const send = (thread: string, text: string) =>
      first.send(`test:c:${thread}`, { type: "prompt", text });
    send("a", "gate a1");
    await h.gate.entered();
    // While a1 holds the only slot: b1 waits for it, and the rest queue behind.
    for (const [thread, text] of [
      ["b", "b1"],
      ["a", "a2"],
      ["c", "c1"],
      ["a", "a3"],
      ["b", "b2"],
    ]) {
      expect(send(thread as string, text as string).status).toBe("queued");
    }
    // The grace runs out: a1 is aborted (it has its `done` line), the others stay in the inbox.
    await first.shutdown(20);
    const next = h.make({ maxConcurrent: 1 });
    const starts: string[] = [];
    next.subscribe((e: OrchestratorEvent) => {
      if (e.type === "runner" && e.event.type === "run_start") starts.push(e.event.text);
    });
    await next.start();
    await until(() => starts.length === 5);
    // Thread a's oldest line (the aborted a1) does not put its a2 ahead of b1, and the slot goes
    // to the replayed prompt accepted first each time, whichever thread asked for it first.
    expect(starts).toEqual(["b1", "a2", "c1", "a3", "b2"]);
  });

  it.each([
    ["another thread's later prompt and a live one", ["a1", "a2", "b1"]],
    ["a live one", ["a1", "a2"]],
  ])("replays two prompts of one thread in a row before %s", async (_name, accepted) => {
    const first = await h.started({ maxConcurrent: 1 });
    const send = (o: RuntimeOrchestrator, text: string) =>
      o.send(`test:c:${text.slice(0, 1)}`, { type: "prompt", text });
    send(first, "x1 gate");
    await h.gate.entered();
    // a1 blocks at the gate after the restart, so that the live prompt comes while it runs.
    for (const text of accepted) {
      expect(send(first, text === "a1" ? "a1 gate" : text).status).toBe("queued");
    }
    await first.shutdown(20);
    h.gate.reset();
    const next = h.make({ maxConcurrent: 1 });
    const starts: string[] = [];
    next.subscribe((e: OrchestratorEvent) => {
      if (e.type === "runner" && e.event.type === "run_start") starts.push(e.event.text);
    });
    await next.start();
    await h.gate.entered();
    // Sent while a1 runs: it asks for the slot before a2 does, and still goes after it.
    expect(send(next, "live").status).toBe("queued");
    h.gate.open();
    await until(() => starts.length === accepted.length + 1);
    // a1's slot goes straight to a2: released first, it went to b1 (or the live one) before a2
    // asked for it.
    expect(starts).toEqual(["a1 gate", ...accepted.slice(1), "live"]);
  });

  it.each([
    ["the inbox journal", (_dir: string) => join(h.home, INBOX_FILE)],
    ["a per-thread inbox of an earlier version", (dir: string) => join(dir, "inbox.jsonl")],
  ])(
    "replays %s: re-runs an unstarted prompt, reports one interrupted after tools",
    async (_name, file) => {
      const id = "test:c:replay";
      const dir = h.store.threadDir(id);
      mkdirSync(dir, { recursive: true });
      const at = new Date().toISOString();
      const lines = [
        { t: "accepted", id: "in-a", threadId: id, at, text: "delete the temp files" },
        { t: "started", id: "in-a", at },
        { t: "tool", id: "in-a", name: "bash", args: '{"command":"rm -rf tmp"}' },
        { t: "accepted", id: "in-b", threadId: id, at, text: "never started" },
        { t: "accepted", id: "in-c", threadId: id, at, text: "already answered" },
        { t: "done", id: "in-c", at, outcome: "stop" },
      ];
      writeFileSync(file(dir), `${lines.map((l) => JSON.stringify(l)).join("\n")}\n{"t":"acc`);
      const link = recordingHandle(id);
      const o = await h.startLinked(link.handle);
      await until(() => link.finals().length === 2);
      expect(link.notices[0]).toMatch(
        /interrupted.*bash \{"command":"rm -rf tmp"\}.*not run again/,
      );
      expect(h.requests).toEqual(["never started"]);
      // The agent knows of the interrupted prompt: its context has it, with the notice.
      const context = JSON.stringify(h.store.loadContext(id));
      expect(context).toMatch(/run was interrupted.*delete the temp files.*guppy: guppy stopped/);
      const log = h.store.readLog(id);
      expect(log.map((e) => e.isBot)).toEqual([true, false, true]);
      expect(log[0]?.text).toMatch(/interrupted/);
      expect(o.counters()).toMatchObject({ replayed: 2, reported: 1 });
      const journal = readFileSync(join(h.home, INBOX_FILE), "utf8");
      expect(journal).toContain('"outcome":"interrupted-reported"');
      // An earlier version's file is imported into the journal, then removed.
      expect(existsSync(join(dir, "inbox.jsonl"))).toBe(false);
      // A restart replays nothing: every prompt is answered.
      await o.shutdown(0);
      const again = await h.started();
      expect(again.counters().replayed).toBe(0);
    },
  );

  it("re-runs a prompt whose run died after logging it without logging it twice", async () => {
    const id = "test:c:relogged";
    const at = new Date().toISOString();
    // The process died mid-run: the prompt is accepted (no done line) and its run had logged it.
    writeFileSync(
      join(h.home, INBOX_FILE),
      `${JSON.stringify({ t: "accepted", id: "in-r", threadId: id, at, text: "say hi", messageId: "m-7" })}\n`,
    );
    h.store.appendLog(id, {
      date: at,
      messageId: "m-7",
      userId: "ann",
      userName: "ann",
      text: "say hi",
      isBot: false,
    });
    h.store.closeFiles(id);
    const link = recordingHandle(id);
    await h.startLinked(link.handle);
    await until(() => link.finals().length === 1);
    expect(h.requests).toEqual(["say hi"]);
    const log = h.store.readLog(id);
    expect(log.map((e) => [e.isBot, e.text])).toEqual([
      [false, "say hi"],
      [true, "re: say hi"],
    ]);
    // Nothing of it is backfilled into the context either: the question and the answer, once.
    expect(h.store.loadContext(id).map((m) => m.role)).toEqual(["user", "assistant"]);
  });

  describe("clearing threads no message comes to", () => {
    it("clears the command ids of a thread no message comes to after a restart, an idle timeout after the start", async () => {
      const id = "test:c:unused";
      const abort = (messageId: string) => ({ type: "abort", messageId }) as const;
      const journal = () => readFileSync(join(h.home, INBOX_FILE), "utf8");
      const o = await h.started();
      for (const messageId of ["a1", "a2", "a3"]) {
        expect(o.send(id, abort(messageId))).toMatchObject({ status: "dropped" });
      }
      // Shut down before the idle timeout: nothing cleared them.
      await o.shutdown(0);
      expect(journal().match(/"t":"ran"/g)).toHaveLength(3);
      const next = await h.started({ idleTimeoutMs: 40 });
      // Within the idle timeout a message delivered again is still known (and makes no actor) ...
      expect(next.send(id, abort("a2"))).toEqual({ status: "duplicate" });
      expect(next.counters().activeActors).toBe(0);
      // ... and then the thread is cleared like an idle one, though it never had an actor.
      await until(() => journal().includes('"t":"cleared"'));
      expect(next.counters().activeActors).toBe(0);
      await next.shutdown(0);
      // The next start's compaction leaves nothing of them; no file of the thread was made.
      await h.started({ idleTimeoutMs: 40 });
      expect(journal()).not.toContain('"t":"ran"');
      expect(existsSync(h.store.threadDir(id))).toBe(false);
    });

    it.each([
      ["no message comes to it", false],
      ["only a command comes to it", true],
    ])(
      "clears a thread after a killed process only with its cursor past its answered prompts, when %s",
      async (_name, command) => {
        const id = "test:c:killed";
        const at = new Date().toISOString();
        // Killed after answering m-1: its journal lines and log entries are there, its cursor not.
        writeFileSync(
          join(h.home, INBOX_FILE),
          [
            { t: "accepted", id: "in-k", threadId: id, at, text: "first", messageId: "m-1" },
            { t: "done", id: "in-k", at, outcome: "stop" },
          ]
            .map((l) => `${JSON.stringify(l)}\n`)
            .join(""),
        );
        const entry = { date: at, userId: "ann", userName: "ann" };
        h.store.appendLog(id, { ...entry, messageId: "m-1", text: "first", isBot: false });
        h.store.appendLog(id, { ...entry, messageId: "r-1", text: "re: first", isBot: true });
        h.store.closeFiles(id);
        const o = h.make({ idleTimeoutMs: 40 });
        const backfilled: number[] = [];
        o.subscribe((e: OrchestratorEvent) => {
          if (e.type === "backfilled") backfilled.push(e.count);
        });
        await o.start();
        if (command) expect(o.send(id, { type: "abort", messageId: "s-1" }).status).toBe("dropped");
        await until(() => readFileSync(join(h.home, INBOX_FILE), "utf8").includes('"t":"cleared"'));
        await until(() => o.counters().activeActors === 0);
        // The next prompt's run does not take the answered m-1 for a message posted meanwhile.
        const t = recordingHandle(id);
        o.send(id, { type: "prompt", text: "second", messageId: "m-2", thread: t.handle });
        await until(() => t.finals().length === 1);
        expect(backfilled).toEqual([]);
        expect(JSON.stringify(h.store.loadContext(id))).not.toContain("while I was not running");
      },
    );
  });

  it("leaves the prompts of a held thread in the journal at start, for a start when it is free", async () => {
    const held = "cli:local:default";
    const first = await h.started();
    h.gate.reset();
    first.send(held, { type: "prompt", text: "gate then answer" });
    await h.gate.entered();
    // Killed mid-run: a second orchestrator of the same home finds the prompt unanswered.
    const kept = await h.started({ heldElsewhere: () => "open in guppy chat" });
    await new Promise((r) => setTimeout(r, 50));
    expect(kept.counters()).toMatchObject({ replayed: 0, runs: 0 });
    expect(h.requests).toEqual(["gate then answer"]);
    const free = await h.started();
    expect(free.counters().replayed).toBe(1);
  });
});
