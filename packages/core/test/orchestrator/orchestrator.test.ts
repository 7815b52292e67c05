import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentTool } from "@mariozechner/pi-agent-core";
import {
  type Context,
  type FauxProviderRegistration,
  type FauxResponseFactory,
  fauxAssistantMessage,
  fauxToolCall,
  registerFauxProvider,
} from "@mariozechner/pi-ai";
import { Type } from "typebox";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { INBOX_FILE } from "../../src/inbox/create-inbox.js";
import {
  createOrchestrator,
  type OrchestratorOptions,
  ThreadHeldError,
} from "../../src/orchestrator/create-orchestrator.js";
import { createAgentRunner } from "../../src/runner/create-agent-runner.js";
import { createStore, type Store } from "../../src/store/create-store.js";
import type {
  CompactResult,
  OrchestratorEvent,
  RunnerEvent,
  RuntimeOrchestrator,
  ThreadHandle,
} from "../../src/types.js";

/** A tool that blocks until the test opens its gate (or the run is aborted). */
function createGate() {
  let open: () => void = () => {};
  let opened = new Promise<void>((r) => {
    open = r;
  });
  let entered: () => void = () => {};
  let enteredP = new Promise<void>((r) => {
    entered = r;
  });
  const tool: AgentTool = {
    name: "gate",
    label: "gate",
    description: "waits for the test",
    parameters: Type.Object({}),
    execute: (_id, _params, signal) =>
      new Promise((resolve, reject) => {
        entered();
        signal?.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
        opened.then(() => resolve({ content: [{ type: "text", text: "gate open" }], details: {} }));
      }),
  };
  return {
    tool,
    open: () => open(),
    entered: () => enteredP,
    reset() {
      opened = new Promise<void>((r) => {
        open = r;
      });
      enteredP = new Promise<void>((r) => {
        entered = r;
      });
    },
  };
}

function lastUserText(context: Context): string {
  for (let i = context.messages.length - 1; i >= 0; i--) {
    const m = context.messages[i];
    if (m?.role === "user")
      return typeof m.content === "string"
        ? m.content
        : m.content.map((c) => ("text" in c ? c.text : "")).join("");
  }
  return "";
}

/** Echoes the last user message; "gate" asks for the gate tool first. */
function script(context: Context) {
  const last = context.messages[context.messages.length - 1];
  if (last?.role === "toolResult")
    return fauxAssistantMessage(`after tool: ${lastUserText(context)}`);
  const text = lastUserText(context);
  if (text.includes("gate"))
    return fauxAssistantMessage(fauxToolCall("gate", {}), { stopReason: "toolUse" });
  return fauxAssistantMessage(`re: ${text}`);
}

function recordingHandle(threadId: string) {
  const events: RunnerEvent[] = [];
  const notices: string[] = [];
  const handle: ThreadHandle = {
    threadId,
    onEvent: (e) => events.push(e),
    notice: (t) => {
      notices.push(t);
    },
  };
  return { handle, events, notices, finals: () => events.filter((e) => e.type === "run_end") };
}

/** What `/compact` said: its report, or "duplicate". */
const reportOf = async (result: Promise<CompactResult>): Promise<string> => {
  const done = await result;
  return done.status === "compacted" ? done.report : done.status;
};

const until = async (predicate: () => boolean, ms = 5000) => {
  const t0 = Date.now();
  while (!predicate()) {
    if (Date.now() - t0 > ms) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe("orchestrator (faux provider)", () => {
  let home: string;
  let store: Store;
  let faux: FauxProviderRegistration;
  let gate: ReturnType<typeof createGate>;
  let orchestrators: RuntimeOrchestrator[];
  let requests: string[];

  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), "guppy-orch-"));
    store = createStore({ home });
    faux = registerFauxProvider({ models: [{ id: "faux-1", contextWindow: 100_000 }] });
    gate = createGate();
    orchestrators = [];
    requests = [];
    faux.setResponses(
      Array.from({ length: 400 }, () => (context: Context) => {
        requests.push(lastUserText(context));
        return script(context);
      }),
    );
  });
  afterEach(async () => {
    gate.open();
    for (const o of orchestrators) await o.shutdown(0);
    faux.unregister();
    rmSync(home, { recursive: true, force: true });
  });

  /** The faux model's agent runner for a thread, as `make` creates it unless told otherwise. */
  const runnerFor = (
    threadId: string,
    options: Partial<Parameters<typeof createAgentRunner>[0]> = {},
  ) =>
    createAgentRunner({
      threadId,
      store,
      model: faux.getModel(),
      apiKey: "faux",
      systemPrompt: "test",
      tools: [gate.tool],
      maxToolRounds: 5,
      maxRetries: 0,
      ...options,
    });

  const make = (overrides: Partial<OrchestratorOptions> = {}) => {
    const o = createOrchestrator({
      store,
      maxConcurrent: 8,
      queueDepth: 5,
      idleTimeoutMs: 60_000,
      createRunner: (threadId) => runnerFor(threadId),
      ...overrides,
    });
    orchestrators.push(o);
    return o;
  };

  /**
   * A thread with three answered prompts, on an orchestrator whose runners compact all but the
   * last 10 tokens (so /compact has something to summarise).
   */
  const threadWithHistory = async (name: string, overrides: Partial<OrchestratorOptions> = {}) => {
    const o = make({
      createRunner: (threadId) => runnerFor(threadId, { tools: [], compactKeepRecentTokens: 10 }),
      ...overrides,
    });
    await o.start();
    const t = recordingHandle(`test:c:${name}`);
    for (const text of ["one", "two", "three"]) {
      o.send(t.handle.threadId, { type: "prompt", text, thread: t.handle });
    }
    await until(() => t.finals().length === 3);
    return { o, t, id: t.handle.threadId };
  };

  /** A summary that comes after 5 s, unless its request is aborted first. */
  const stoppableSummary: FauxResponseFactory = (_context, options) =>
    new Promise((resolve) => {
      const timer = setTimeout(() => resolve(fauxAssistantMessage("too late")), 5000);
      options?.signal?.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve(fauxAssistantMessage("", { stopReason: "aborted" }));
      });
    });

  it("answers every prompt of a thread in order, one run at a time", async () => {
    const o = make();
    await o.start();
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
    expect(store.loadContext(t.handle.threadId).filter((m) => m.role === "user")).toHaveLength(3);
  });

  it("writes a deferred prompt's accepted line before its run starts, also when it starts at once", async () => {
    const journalAtStart: string[] = [];
    const o = make({
      createRunner: (threadId) => {
        const runner = runnerFor(threadId, { tools: [] });
        return {
          ...runner,
          prompt: (input) => {
            journalAtStart.push(readFileSync(join(home, INBOX_FILE), "utf8"));
            return runner.prompt(input);
          },
        };
      },
    });
    await o.start();
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
    const o = make();
    await o.start();
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
    expect(requests).toEqual([]);
    expect(o.status(id).queued).toBe(2);
    fetched({ text: "photo [attachment saved: /x/p.jpg]" });
    await until(() => t.finals().length === 2);
    expect(requests).toEqual(["photo [attachment saved: /x/p.jpg]", "and translate it"]);
    expect(store.readLog(id)[0]?.text).toBe("photo [attachment saved: /x/p.jpg]");
  });

  it("keeps a prompt still waiting for its content in the inbox at shutdown, with its saved text", async () => {
    const o = make();
    await o.start();
    const t = recordingHandle("test:c:content-stop");
    const id = t.handle.threadId;
    // An active thread: a prompt with nothing to wait for would start at once.
    o.send(id, { type: "prompt", text: "hello", thread: t.handle });
    await until(() => t.finals().length === 1);
    const never = new Promise<{ text: string }>(() => {});
    o.send(id, { type: "prompt", text: "photo (saved)", content: never, thread: t.handle });
    await new Promise((r) => setTimeout(r, 50));
    const t0 = Date.now();
    await o.shutdown(5000);
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(requests).toEqual(["hello"]);
    expect(t.notices).toEqual([
      "guppy is restarting: your message is saved and will be answered when it is back.",
    ]);
    const next = make();
    next.registerChannel({ adapterId: "test", threadHandle: () => t.handle });
    await next.start();
    await until(() => t.finals().length === 2);
    expect(requests).toEqual(["hello", "photo (saved)"]);
  });

  it("reports the context engine's figures in status and compacts on request", async () => {
    const o = make({
      createRunner: (threadId) => runnerFor(threadId, { tools: [], compactKeepRecentTokens: 10 }),
    });
    await o.start();
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
    expect(report).toMatch(/^Compacted: \d+ messages summarised/);
    const after = o.status(t.handle.threadId);
    expect(after.compactions).toBe(1);
    expect(after.messages).toBeLessThan(before.messages);
  });

  it("unloads a runner that /compact or /new loaded on an inactive thread at the idle timeout", async () => {
    const { o, id } = await threadWithHistory("commands", { idleTimeoutMs: 40 });
    await until(() => o.counters().activeActors === 0);

    expect(await reportOf(o.compact(id))).toMatch(/^Compacted:/);
    expect(o.status(id)).toMatchObject({ state: "idle", compactions: 1 });
    await until(() => o.counters().activeActors === 0);
    expect(o.counters().loadedRunners).toBe(0);
    expect(o.status(id)).toMatchObject({ state: "inactive", compactions: 1 });

    await o.reset(id);
    expect(o.status(id)).toMatchObject({ messages: 0, compactions: 0 });
    await until(() => o.counters().activeActors === 0);
  });

  it("keeps a thread active while /compact runs, and runs a prompt sent meanwhile after it", async () => {
    const { o, t, id } = await threadWithHistory("slow-summary", { idleTimeoutMs: 40 });
    // The idle timeout (40 ms) is running; the summary takes longer than that.
    faux.setResponses([
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
    expect(await compaction).toMatch(/^Compacted:/);
    await until(() => t.finals().length === 4);
    expect(t.finals()[3]).toMatchObject({ stopReason: "stop", text: "re: four" });
    expect(o.status(id)).toMatchObject({ state: "idle", compactions: 1 });
    expect(o.counters().activeActors).toBe(1);
    await until(() => o.counters().activeActors === 0);
    expect(o.status(id)).toMatchObject({ state: "inactive", compactions: 1 });

    // /stop reaches a compaction under way: its summary request is cancelled.
    faux.setResponses([stoppableSummary]);
    const stopped = reportOf(o.compact(id));
    await new Promise((r) => setTimeout(r, 20));
    const t0 = Date.now();
    expect(o.send(id, { type: "abort" })).toEqual({ status: "delivered" });
    expect(await stopped).toBe("Compaction stopped; the context is as it was.");
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(o.status(id).compactions).toBe(1);

    // /new sent while a compaction runs waits for it rather than failing.
    faux.setResponses([
      async () => {
        await new Promise((r) => setTimeout(r, 100));
        return fauxAssistantMessage("another summary");
      },
    ]);
    const again = reportOf(o.compact(id));
    await new Promise((r) => setTimeout(r, 20));
    const reset = await o.reset(id);
    expect(await again).toMatch(/^Compacted:/);
    expect(reset.status === "reset" ? reset.archived : undefined).toMatch(/context-.*\.jsonl$/);
    expect(o.status(id)).toMatchObject({ messages: 0, compactions: 0 });
  });

  it("stops a /compact that holds queued prompts when the shutdown grace runs out", async () => {
    const { o, t, id } = await threadWithHistory("compact-at-shutdown");
    faux.setResponses([stoppableSummary]);
    const compaction = reportOf(o.compact(id));
    await new Promise((r) => setTimeout(r, 20));
    o.send(id, { type: "prompt", text: "four", thread: t.handle });
    const t0 = Date.now();
    await o.shutdown(50);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(await compaction).toBe("Compaction stopped; the context is as it was.");
    // Not run: it stays accepted in the inbox for the next start.
    expect(t.finals()).toHaveLength(3);
    expect(readFileSync(join(home, INBOX_FILE), "utf8")).toContain('"text":"four"');
  });

  it("answers 'busy' over the queue depth, counts it, and still runs what was queued", async () => {
    const o = make({ queueDepth: 2 });
    await o.start();
    const t = recordingHandle("test:c:busy");
    const id = t.handle.threadId;
    expect(o.send(id, { type: "prompt", text: "gate first", thread: t.handle }).status).toBe(
      "queued",
    );
    await gate.entered();
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
    gate.open();
    await until(() => t.finals().length === 3);
    expect(requests).not.toContain("q3");
    expect(requests.filter((r) => r === "q1" || r === "q2")).toEqual(["q1", "q2"]);
  });

  it("counts a prompt waiting for its concurrency slot as queued, for the depth as for status", async () => {
    const o = make({ maxConcurrent: 1, queueDepth: 2 });
    await o.start();
    const a = recordingHandle("test:c:depth-a");
    const b = recordingHandle("test:c:depth-b");
    const id = b.handle.threadId;
    o.send(a.handle.threadId, { type: "prompt", text: "gate a1", thread: a.handle });
    await gate.entered();
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
    gate.open();
    await until(() => b.finals().length === 2);
    expect(requests).not.toContain("b3");
    await until(() => o.status(id).state === "idle");
    expect(o.status(id).queued).toBe(0);
  });

  it.each([
    ["an idle thread", true],
    ["a new thread", false],
  ])(
    "queues a burst of two to %s in one turn with a queue depth of 1: the first has its slot, it does not wait",
    async (_name, loaded) => {
      const o = make({ queueDepth: 1 });
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
      await gate.entered();
      gate.open();
      await until(() => t.finals().length === done + 2);
      expect(starts.filter((r) => r !== "warm up")).toEqual(["gate first", "second"]);
    },
  );

  it("steers and aborts the running agent, bypassing the queue; queued prompts still run", async () => {
    const o = make();
    await o.start();
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
    await gate.entered();
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

  it("deactivates an idle thread (drops the runner, clears the inbox) and reactivates it with its context", async () => {
    let created = 0;
    const model = `${faux.getModel().provider}/${faux.getModel().id}`;
    const o = make({
      idleTimeoutMs: 40,
      modelName: model,
      createRunner: (threadId) => {
        created++;
        return runnerFor(threadId, { tools: [] });
      },
    });
    await o.start();
    const t = recordingHandle("test:c:idle");
    const id = t.handle.threadId;
    o.send(id, { type: "prompt", text: "remember 42", thread: t.handle });
    await until(() => t.finals().length === 1);
    expect(o.status(id).state).toBe("idle");
    expect(o.status(id).model).toBe(model);
    const journal = () => readFileSync(join(home, INBOX_FILE), "utf8");
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
    expect(store.loadContext(id)).toHaveLength(4);
  });

  it("keeps a thread's figures and last activity for status after a restart, without loading its agent", async () => {
    const first = make({ idleTimeoutMs: 40, createRunner: (id) => runnerFor(id, { tools: [] }) });
    await first.start();
    const idle = recordingHandle("test:c:went-idle");
    const busy = recordingHandle("test:c:still-loaded");
    first.send(idle.handle.threadId, { type: "prompt", text: "one", thread: idle.handle });
    await until(() => idle.finals().length === 1);
    await until(() => first.status(idle.handle.threadId).state === "inactive");
    const idleBefore = first.status(idle.handle.threadId);
    await first.shutdown(0);
    // This one is still loaded at shutdown: its figures are saved then.
    const second = make({ createRunner: (id) => runnerFor(id, { tools: [] }) });
    await second.start();
    second.send(busy.handle.threadId, { type: "prompt", text: "two", thread: busy.handle });
    await until(() => busy.finals().length === 1);
    const busyBefore = second.status(busy.handle.threadId);
    expect(busyBefore).toMatchObject({ state: "idle", messages: 2 });
    await second.shutdown(0);

    let created = 0;
    const third = make({
      createRunner: (id) => {
        created++;
        return runnerFor(id, { tools: [] });
      },
    });
    await third.start();
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
    const fourth = make();
    expect(fourth.status(idle.handle.threadId)).toMatchObject({ messages: 0, contextTokens: 0 });
    expect(fourth.status(busy.handle.threadId).messages).toBe(2);
    expect(created).toBe(0);
  });

  it("keeps an idle thread's actor, figures and all, when its status.json could not be written", async () => {
    const failing: Store = {
      ...store,
      saveStatus: () => {
        throw new Error("ENOSPC: no space left on device");
      },
    };
    const o = make({
      store: failing,
      idleTimeoutMs: 40,
      createRunner: (id) => runnerFor(id, { tools: [] }),
    });
    await o.start();
    const t = recordingHandle("test:c:full-disk");
    o.send(t.handle.threadId, { type: "prompt", text: "hello", thread: t.handle });
    await until(() => t.finals().length === 1);
    await until(() => o.counters().loadedRunners === 0);
    expect(o.counters().activeActors).toBe(1);
    expect(o.status(t.handle.threadId)).toMatchObject({ state: "inactive", messages: 2 });
  });

  it("keeps a bounded number of saved statuses read, however many ids are looked up", async () => {
    const reads = new Map<string, number>();
    const counting: Store = {
      ...store,
      readStatus: (threadId) => {
        reads.set(threadId, (reads.get(threadId) ?? 0) + 1);
        return undefined;
      },
    };
    const o = make({ store: counting });
    o.status("test:c:first");
    o.status("test:c:first");
    expect(reads.get("test:c:first")).toBe(1);
    for (let i = 0; i < 70_000; i++) o.status(`test:c:n${i}`);
    o.status("test:c:first");
    expect(reads.get("test:c:first")).toBe(2);
  });

  it("ignores a status.json that is not one, and writes none for a thread whose directory is gone", async () => {
    const o = make({ idleTimeoutMs: 40, createRunner: (id) => runnerFor(id, { tools: [] }) });
    await o.start();
    const t = recordingHandle("test:c:odd");
    const id = t.handle.threadId;
    mkdirSync(store.threadDir(id), { recursive: true });
    writeFileSync(
      join(store.threadDir(id), "status.json"),
      '{"lastActivity":"2026-01-02T03:04:05.000Z","messages":"many","contextTokens":1}',
    );
    expect(o.status(id)).toMatchObject({ state: "inactive", messages: 0 });
    expect(o.status(id).lastActivity).toBeUndefined();

    o.send(id, { type: "prompt", text: "hello", thread: t.handle });
    await until(() => t.finals().length === 1);
    // Removed by hand while loaded: going idle does not bring the directory back.
    rmSync(store.threadDir(id), { recursive: true });
    await until(() => o.status(id).state === "inactive");
    expect(existsSync(store.threadDir(id))).toBe(false);
  });

  it("starts an idle thread afresh when its directory was deleted while it was inactive", async () => {
    const o = make({ idleTimeoutMs: 40, createRunner: (id) => runnerFor(id, { tools: [] }) });
    await o.start();
    const t = recordingHandle("test:c:removed");
    const id = t.handle.threadId;
    o.send(id, { type: "prompt", text: "first", thread: t.handle });
    await until(() => t.finals().length === 1);
    await until(() => o.status(id).state === "inactive");
    // The user resets the thread by hand: its directory goes, files and all.
    rmSync(store.threadDir(id), { recursive: true });
    o.send(id, { type: "prompt", text: "second", thread: t.handle });
    await until(() => t.finals().length === 2);
    expect(t.finals()[1]).toMatchObject({ stopReason: "stop", text: "re: second" });
    expect(store.loadContext(id)).toHaveLength(2);
    expect(store.readLog(id).map((e) => e.text)).toEqual(["second", "re: second"]);
  });

  it("limits running agents globally and serves waiting threads first come, first served", async () => {
    const o = make({ maxConcurrent: 1 });
    const starts: string[] = [];
    o.subscribe((e: OrchestratorEvent) => {
      if (e.type === "runner" && e.event.type === "run_start") starts.push(e.event.text);
    });
    await o.start();
    const a = recordingHandle("test:c:a");
    const b = recordingHandle("test:c:b");
    o.send(a.handle.threadId, { type: "prompt", text: "gate a1", thread: a.handle });
    await gate.entered();
    o.send(a.handle.threadId, { type: "prompt", text: "a2", thread: a.handle });
    o.send(a.handle.threadId, { type: "prompt", text: "a3", thread: a.handle });
    o.send(b.handle.threadId, { type: "prompt", text: "b1", thread: b.handle });
    const c = recordingHandle("test:c:c");
    o.send(c.handle.threadId, { type: "prompt", text: "c1", thread: c.handle });
    expect(o.counters()).toMatchObject({ runningNow: 1, waitingForSlot: 2 });
    gate.open();
    await until(() => a.finals().length + b.finals().length + c.finals().length === 5);
    // b and c asked for a slot while a1 ran; a asks again only after a1, so it goes behind them.
    expect(starts).toEqual(["gate a1", "b1", "c1", "a2", "a3"]);
  });

  it("replays the prompts left at a shutdown in the order accepted, across threads", async () => {
    const first = make({ maxConcurrent: 1 });
    await first.start();
    const send = (thread: string, text: string) =>
      first.send(`test:c:${thread}`, { type: "prompt", text });
    send("a", "gate a1");
    await gate.entered();
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
    const next = make({ maxConcurrent: 1 });
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
    const first = make({ maxConcurrent: 1 });
    await first.start();
    const send = (o: RuntimeOrchestrator, text: string) =>
      o.send(`test:c:${text.slice(0, 1)}`, { type: "prompt", text });
    send(first, "x1 gate");
    await gate.entered();
    // a1 blocks at the gate after the restart, so that the live prompt comes while it runs.
    for (const text of accepted) {
      expect(send(first, text === "a1" ? "a1 gate" : text).status).toBe("queued");
    }
    await first.shutdown(20);
    gate.reset();
    const next = make({ maxConcurrent: 1 });
    const starts: string[] = [];
    next.subscribe((e: OrchestratorEvent) => {
      if (e.type === "runner" && e.event.type === "run_start") starts.push(e.event.text);
    });
    await next.start();
    await gate.entered();
    // Sent while a1 runs: it asks for the slot before a2 does, and still goes after it.
    expect(send(next, "live").status).toBe("queued");
    gate.open();
    await until(() => starts.length === accepted.length + 1);
    // a1's slot goes straight to a2: released first, it went to b1 (or the live one) before a2
    // asked for it.
    expect(starts).toEqual(["a1 gate", ...accepted.slice(1), "live"]);
  });

  it.each([
    ["the inbox journal", (_dir: string) => join(home, INBOX_FILE)],
    ["a per-thread inbox of an earlier version", (dir: string) => join(dir, "inbox.jsonl")],
  ])(
    "replays %s: re-runs an unstarted prompt, reports one interrupted after tools",
    async (_name, file) => {
      const id = "test:c:replay";
      const dir = store.threadDir(id);
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
      const o = make();
      const link = recordingHandle(id);
      o.registerChannel({ adapterId: "test", threadHandle: () => link.handle });
      await o.start();
      await until(() => link.finals().length === 2);
      expect(link.notices[0]).toMatch(
        /interrupted.*bash \{"command":"rm -rf tmp"\}.*not run again/,
      );
      expect(requests).toEqual(["never started"]);
      // The agent knows of the interrupted prompt: its context has it, with the notice.
      const context = JSON.stringify(store.loadContext(id));
      expect(context).toMatch(/run was interrupted.*delete the temp files.*guppy: guppy stopped/);
      const log = store.readLog(id);
      expect(log.map((e) => e.isBot)).toEqual([true, false, true]);
      expect(log[0]?.text).toMatch(/interrupted/);
      expect(o.counters()).toMatchObject({ replayed: 2, reported: 1 });
      const journal = readFileSync(join(home, INBOX_FILE), "utf8");
      expect(journal).toContain('"outcome":"interrupted-reported"');
      // An earlier version's file is imported into the journal, then removed.
      expect(existsSync(join(dir, "inbox.jsonl"))).toBe(false);
      // A restart replays nothing: every prompt is answered.
      await o.shutdown(0);
      const again = make();
      await again.start();
      expect(again.counters().replayed).toBe(0);
    },
  );

  it("takes the spellings of one thread id as one thread: one actor, one queue, one order", async () => {
    const o = make({ maxConcurrent: 4 });
    await o.start();
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
    expect(store.readLog("test:c:default").map((e) => e.text)).toEqual([
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
    const o = make({
      createRunner: (id) => {
        made.push(id);
        return runnerFor(id);
      },
    });
    await o.start();
    const logged = () => store.readLog("test:chat:default").length;
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
    expect(store.loadContext("test:chat")).toHaveLength(6);
  });

  it("re-runs a prompt whose run died after logging it without logging it twice", async () => {
    const id = "test:c:relogged";
    const at = new Date().toISOString();
    // The process died mid-run: the prompt is accepted (no done line) and its run had logged it.
    writeFileSync(
      join(home, INBOX_FILE),
      `${JSON.stringify({ t: "accepted", id: "in-r", threadId: id, at, text: "say hi", messageId: "m-7" })}\n`,
    );
    store.appendLog(id, {
      date: at,
      messageId: "m-7",
      userId: "ann",
      userName: "ann",
      text: "say hi",
      isBot: false,
    });
    store.closeFiles(id);
    const o = make();
    const link = recordingHandle(id);
    o.registerChannel({ adapterId: "test", threadHandle: () => link.handle });
    await o.start();
    await until(() => link.finals().length === 1);
    expect(requests).toEqual(["say hi"]);
    const log = store.readLog(id);
    expect(log.map((e) => [e.isBot, e.text])).toEqual([
      [false, "say hi"],
      [true, "re: say hi"],
    ]);
    // Nothing of it is backfilled into the context either: the question and the answer, once.
    expect(store.loadContext(id).map((m) => m.role)).toEqual(["user", "assistant"]);
  });

  it("drops a prompt whose message id the thread has accepted: queued, answered, after a restart, after its inbox was cleared", async () => {
    const id = "test:c:again";
    const t = recordingHandle(id);
    const prompt = (text: string, messageId: string) =>
      ({ type: "prompt", text, messageId, thread: t.handle }) as const;
    const o = make({ idleTimeoutMs: 40 });
    await o.start();
    expect(o.send(id, prompt("gate first", "m1")).status).toBe("queued");
    await gate.entered();
    // Delivered again while it runs, and while it is still queued.
    expect(o.send(id, prompt("gate first", "m1"))).toEqual({ status: "duplicate" });
    expect(o.send(id, prompt("second", "m2")).status).toBe("queued");
    expect(o.send(id, prompt("second", "m2"))).toEqual({ status: "duplicate" });
    gate.open();
    await until(() => t.finals().length === 2);
    expect(o.send(id, prompt("gate first", "m1"))).toEqual({ status: "duplicate" });
    // After a restart (the inbox still lists the answered prompts) ...
    await o.shutdown(0);
    const next = make({ idleTimeoutMs: 40 });
    await next.start();
    expect(next.send(id, prompt("second", "m2"))).toEqual({ status: "duplicate" });
    // An actor made only to find that holds nothing.
    expect(next.counters().activeActors).toBe(0);
    // ... and once the thread ran again, went idle and had its inbox cleared (its log says so).
    expect(next.send(id, prompt("third", "m3")).status).toBe("queued");
    await until(() => t.finals().length === 3);
    await until(() => next.counters().activeActors === 0);
    expect(readFileSync(join(home, INBOX_FILE), "utf8")).toContain('"t":"cleared"');
    await next.shutdown(0);
    const third = make();
    await third.start();
    expect(third.send(id, prompt("gate first", "m1"))).toEqual({ status: "duplicate" });
    expect(third.send(id, prompt("third", "m3"))).toEqual({ status: "duplicate" });
    expect(third.send(id, prompt("fourth", "m4")).status).toBe("queued");
    await until(() => t.finals().length === 4);
    // Each message ran once; nothing was said about the ones dropped.
    const asked = store
      .readLog(id)
      .filter((e) => !e.isBot)
      .map((e) => e.messageId);
    expect(asked).toEqual(["m1", "m2", "m3", "m4"]);
    expect(t.notices).toEqual([]);
  });

  it("does not archive twice for a /new delivered again, also after a restart", async () => {
    const { o, t, id } = await threadWithHistory("new-again");
    expect(await o.reset(id, "n1")).toMatchObject({ status: "reset" });
    o.send(id, { type: "prompt", text: "after new", messageId: "m9", thread: t.handle });
    await until(() => t.finals().length === 4);
    expect(await o.reset(id, "n1")).toEqual({ status: "duplicate" });
    expect(o.status(id).messages).toBe(2);
    await o.shutdown(0);
    const next = make();
    await next.start();
    expect(await next.reset(id, "n1")).toEqual({ status: "duplicate" });
    expect(store.loadContext(id)).toHaveLength(2);
    expect(await next.reset(id, "n2")).toMatchObject({ status: "reset" });
    expect(store.loadContext(id)).toHaveLength(0);
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
      store
        .loadContext(id)
        .filter((m) => m.role === "user" && JSON.stringify(m.content).includes("mention cats"));
    const o = make();
    await o.start();
    // A /stop with nothing running is dropped, and remembered like one that stopped a run.
    expect(o.send(id, abort("a0"))).toMatchObject({ status: "dropped" });
    expect(o.send(id, prompt("gate one", "m1")).status).toBe("queued");
    await gate.entered();
    expect(o.send(id, steer)).toEqual({ status: "delivered" });
    expect(o.send(id, steer)).toEqual({ status: "duplicate" });
    expect(o.send(id, abort("a0"))).toEqual({ status: "duplicate" });
    gate.open();
    await until(() => t.finals().length === 1);
    expect(t.finals()[0]).toMatchObject({ stopReason: "stop" });
    expect(steered()).toHaveLength(1);

    gate.reset();
    o.send(id, prompt("gate two", "m2"));
    await gate.entered();
    expect(o.send(id, abort("a1"))).toEqual({ status: "delivered" });
    await until(() => t.finals().length === 2);
    expect(t.finals()[1]).toMatchObject({ stopReason: "aborted" });
    // Delivered again while a later run runs: that run goes on.
    gate.reset();
    o.send(id, prompt("gate three", "m3"));
    await gate.entered();
    expect(o.send(id, abort("a1"))).toEqual({ status: "duplicate" });
    expect(o.send(id, steer)).toEqual({ status: "duplicate" });
    gate.open();
    await until(() => t.finals().length === 3);
    expect(t.finals()[2]).toMatchObject({ stopReason: "stop" });

    // After a restart the inbox journal knows them: an actor made only to find that holds nothing.
    await o.shutdown(0);
    const next = make();
    await next.start();
    expect(next.send(id, abort("a1"))).toEqual({ status: "duplicate" });
    expect(next.counters().activeActors).toBe(0);
    gate.reset();
    next.send(id, prompt("gate four", "m4"));
    await gate.entered();
    for (const messageId of ["a0", "a1"]) {
      expect(next.send(id, abort(messageId))).toEqual({ status: "duplicate" });
    }
    expect(next.send(id, steer)).toEqual({ status: "duplicate" });
    gate.open();
    await until(() => t.finals().length === 4);
    expect(t.finals()[3]).toMatchObject({ stopReason: "stop" });
    expect(steered()).toHaveLength(1);
    // A new one still acts.
    expect(next.send(id, abort("a2"))).toMatchObject({ status: "dropped" });
  });

  it("clears the command ids of a thread no message comes to after a restart, an idle timeout after the start", async () => {
    const id = "test:c:unused";
    const abort = (messageId: string) => ({ type: "abort", messageId }) as const;
    const journal = () => readFileSync(join(home, INBOX_FILE), "utf8");
    const o = make();
    await o.start();
    for (const messageId of ["a1", "a2", "a3"]) {
      expect(o.send(id, abort(messageId))).toMatchObject({ status: "dropped" });
    }
    // Shut down before the idle timeout: nothing cleared them.
    await o.shutdown(0);
    expect(journal().match(/"t":"ran"/g)).toHaveLength(3);
    const next = make({ idleTimeoutMs: 40 });
    await next.start();
    // Within the idle timeout a message delivered again is still known (and makes no actor) ...
    expect(next.send(id, abort("a2"))).toEqual({ status: "duplicate" });
    expect(next.counters().activeActors).toBe(0);
    // ... and then the thread is cleared like an idle one, though it never had an actor.
    await until(() => journal().includes('"t":"cleared"'));
    expect(next.counters().activeActors).toBe(0);
    await next.shutdown(0);
    // The next start's compaction leaves nothing of them; no file of the thread was made.
    const third = make({ idleTimeoutMs: 40 });
    await third.start();
    expect(journal()).not.toContain('"t":"ran"');
    expect(existsSync(store.threadDir(id))).toBe(false);
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
        join(home, INBOX_FILE),
        [
          { t: "accepted", id: "in-k", threadId: id, at, text: "first", messageId: "m-1" },
          { t: "done", id: "in-k", at, outcome: "stop" },
        ]
          .map((l) => `${JSON.stringify(l)}\n`)
          .join(""),
      );
      const entry = { date: at, userId: "ann", userName: "ann" };
      store.appendLog(id, { ...entry, messageId: "m-1", text: "first", isBot: false });
      store.appendLog(id, { ...entry, messageId: "r-1", text: "re: first", isBot: true });
      store.closeFiles(id);
      const o = make({ idleTimeoutMs: 40 });
      const backfilled: number[] = [];
      o.subscribe((e: OrchestratorEvent) => {
        if (e.type === "backfilled") backfilled.push(e.count);
      });
      await o.start();
      if (command) expect(o.send(id, { type: "abort", messageId: "s-1" }).status).toBe("dropped");
      await until(() => readFileSync(join(home, INBOX_FILE), "utf8").includes('"t":"cleared"'));
      await until(() => o.counters().activeActors === 0);
      // The next prompt's run does not take the answered m-1 for a message posted meanwhile.
      const t = recordingHandle(id);
      o.send(id, { type: "prompt", text: "second", messageId: "m-2", thread: t.handle });
      await until(() => t.finals().length === 1);
      expect(backfilled).toEqual([]);
      expect(JSON.stringify(store.loadContext(id))).not.toContain("while I was not running");
    },
  );

  it("does not compact twice for a /compact delivered again, also after a restart", async () => {
    const { o, id } = await threadWithHistory("compact-again");
    expect(await reportOf(o.compact(id, "c1"))).toMatch(/^Compacted:/);
    expect(await reportOf(o.compact(id, "c1"))).toBe("duplicate");
    expect(o.status(id).compactions).toBe(1);
    await o.shutdown(0);
    const next = make({
      createRunner: (threadId) => runnerFor(threadId, { tools: [], compactKeepRecentTokens: 10 }),
    });
    await next.start();
    expect(await reportOf(next.compact(id, "c1"))).toBe("duplicate");
    expect(next.counters()).toMatchObject({ activeActors: 0, loadedRunners: 0 });
    expect(next.status(id).compactions).toBe(1);
  });

  it("backfills messages logged while no agent ran, in order and deduplicated by id", async () => {
    const o = make();
    await o.start();
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
    store.appendLog(id, entry("m1", "the door code is 1234"));
    store.appendLog(id, entry("m2", "bring snacks"));
    store.appendLog(id, entry("m1", "the door code is 1234"));
    store.appendLog(id, entry("m3", "what did I say?"));
    o.send(id, { type: "prompt", text: "what did I say?", messageId: "m3", thread: t.handle });
    await until(() => t.finals().length === 1);
    const users = store.loadContext(id).filter((m) => m.role === "user");
    expect(users).toHaveLength(2);
    const synced = String(users[0]?.content);
    expect(synced.match(/door code/g)).toHaveLength(1);
    expect(synced.indexOf("door code")).toBeLessThan(synced.indexOf("bring snacks"));
    expect(synced).not.toContain("what did I say?");
    // A second prompt backfills nothing new.
    o.send(id, { type: "prompt", text: "again", thread: t.handle });
    await until(() => t.finals().length === 2);
    expect(store.loadContext(id).filter((m) => m.role === "user")).toHaveLength(3);
  });

  it("refuses prompts after shutdown and lets a running turn finish within the grace", async () => {
    const o = make();
    await o.start();
    const t = recordingHandle("test:c:shutdown");
    const id = t.handle.threadId;
    o.send(id, { type: "prompt", text: "gate slow", thread: t.handle });
    o.send(id, { type: "prompt", text: "queued behind", thread: t.handle });
    await gate.entered();
    const done = o.shutdown(5000);
    expect(o.send(id, { type: "prompt", text: "late" })).toMatchObject({ status: "refused" });
    expect(t.notices.some((n) => /saved and will be answered/.test(n))).toBe(true);
    setTimeout(() => gate.open(), 30);
    await done;
    expect(t.finals()).toHaveLength(1);
    expect(t.finals()[0]).toMatchObject({ stopReason: "stop" });
    // The queued prompt is still in the inbox for the next start.
    const next = make();
    next.registerChannel({ adapterId: "test", threadHandle: () => t.handle });
    await next.start();
    await until(() => t.finals().length === 2);
    expect(t.finals()[1]).toMatchObject({ text: "re: queued behind" });
  });

  it("tells a prompt waiting for its concurrency slot at shutdown that it is saved, as a queued one", async () => {
    const o = make({ maxConcurrent: 1 });
    await o.start();
    const a = recordingHandle("test:c:slot-a");
    const b = recordingHandle("test:c:slot-b");
    o.send(a.handle.threadId, { type: "prompt", text: "gate slow", thread: a.handle });
    await gate.entered();
    o.send(b.handle.threadId, { type: "prompt", text: "waits for the slot", thread: b.handle });
    expect(o.counters().waitingForSlot).toBe(1);
    const done = o.shutdown(5000);
    expect(b.notices).toEqual([
      "guppy is restarting: your message is saved and will be answered when it is back.",
    ]);
    expect(a.notices).toEqual([]); // running: it may still finish
    setTimeout(() => gate.open(), 30);
    await done;
    expect(b.finals()).toEqual([]);
    // Kept, as the notice says: the next start answers it.
    const next = make();
    next.registerChannel({ adapterId: "test", threadHandle: () => b.handle });
    await next.start();
    await until(() => b.finals().length === 1);
    expect(b.finals()[0]).toMatchObject({ text: "re: waits for the slot" });
  });

  it("aborts running turns when the shutdown grace runs out, with the context saved", async () => {
    const o = make();
    await o.start();
    const t = recordingHandle("test:c:grace");
    o.send(t.handle.threadId, { type: "prompt", text: "gate forever", thread: t.handle });
    await gate.entered();
    await o.shutdown(20);
    expect(t.finals()[0]).toMatchObject({ stopReason: "aborted" });
    expect(store.loadContext(t.handle.threadId).length).toBeGreaterThanOrEqual(2);
    // The sender is told, and so is anyone reading the thread's log later (GET messages).
    const stopped = "guppy is shutting down: this run was stopped; its progress is saved.";
    expect(t.notices).toEqual([stopped]);
    expect(
      store.readLog(t.handle.threadId).map((e) => [e.isBot ? "guppy" : "user", e.text]),
    ).toEqual([
      ["user", "gate forever"],
      ["guppy", stopped],
    ]);
  });

  it("refuses send, reset and compact of a thread another process holds (heldElsewhere), and runs the others", async () => {
    const reason = "open in guppy chat";
    const o = make({ heldElsewhere: (id) => (id.startsWith("cli:") ? reason : undefined) });
    await o.start();
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
    expect(existsSync(store.threadDir(held))).toBe(false);
    const t = recordingHandle("test:c:free");
    expect(
      o.send(t.handle.threadId, { type: "prompt", text: "free", thread: t.handle }).status,
    ).toBe("queued");
    await until(() => t.finals().length === 1);
  });

  it("leaves the prompts of a held thread in the journal at start, for a start when it is free", async () => {
    const held = "cli:local:default";
    const first = make();
    await first.start();
    gate.reset();
    first.send(held, { type: "prompt", text: "gate then answer" });
    await gate.entered();
    // Killed mid-run: a second orchestrator of the same home finds the prompt unanswered.
    const kept = make({ heldElsewhere: () => "open in guppy chat" });
    await kept.start();
    await new Promise((r) => setTimeout(r, 50));
    expect(kept.counters()).toMatchObject({ replayed: 0, runs: 0 });
    expect(requests).toEqual(["gate then answer"]);
    const free = make();
    await free.start();
    expect(free.counters().replayed).toBe(1);
  });
});
