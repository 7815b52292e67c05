import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MessageChannel } from "node:worker_threads";
import type { OrchestratorEvent, RunnerEvent, SendResult } from "@guppy/core";
import { createFileThreadLog } from "@guppy/core/state";
import { LOG_FILE, threadDirOf } from "@guppy/core/thread-layout";
import { readUsageReport, USAGE_FILE } from "@guppy/core/usage";
import { afterEach, describe, expect, it } from "vitest";
import {
  createRemoteBackend,
  REQUESTS_PER_TURN,
  serveBackend,
} from "../../../src/channels/http/backend-rpc.js";
import { createEventCalls } from "../../../src/channels/http/event-calls.js";
import {
  createLocalBackend,
  type HttpBackend,
  type HttpMessage,
  type PromptReply,
} from "../../../src/channels/http/http-backend.js";

/** The two ends of backend-rpc over a real MessageChannel (what the worker thread uses). */
const open: Array<() => void> = [];
afterEach(() => {
  for (const close of open.splice(0)) close();
});

function connect(backend: HttpBackend, events = true, home = "/nonexistent") {
  const { port1, port2 } = new MessageChannel();
  const posted: string[] = [];
  const post = port1.postMessage.bind(port1);
  port1.postMessage = (batch: unknown) => {
    posted.push((batch as Array<{ type: string }>).map((m) => m.type).join("+"));
    post(batch);
  };
  const stop = serveBackend(port1, backend);
  open.push(() => {
    stop();
    port1.close();
    port2.close();
  });
  return { remote: createRemoteBackend(port2, { events, home }), posted };
}

const usage: RunnerEvent = {
  type: "usage",
  usage: {
    input: 3,
    output: 2,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 5,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  },
  totals: { input: 3, output: 2, cacheRead: 0, cacheWrite: 0, cost: 0, requests: 1 },
};
/** `/new` and `/compact` of an orchestrator these tests never call. */
const noCommands = {
  reset: () => Promise.reject(new Error("unused")),
  compact: () => Promise.reject(new Error("unused")),
};
const runEnd: RunnerEvent = { type: "run_end", text: "hello", stopReason: "stop" };
const later = () => new Promise((r) => setTimeout(r, 5));
/** Waits for what crosses the port (a loaded machine may take a while), 5 s at most. */
async function until(check: () => boolean): Promise<void> {
  for (let waited = 0; !check() && waited < 5000; waited += 5) await later();
}

/** A prompt from user "U", its run's events going to `reply`. */
const prompt = (reply: PromptReply): HttpMessage => ({
  type: "prompt",
  text: "hi",
  userId: "u",
  userName: "U",
  reply,
});

/** Records a reply's events and notices as strings, in order. */
function recorder(events: PromptReply["events"]) {
  const seen: string[] = [];
  const reply: PromptReply = {
    events,
    onEvent: (e) => seen.push(e.type === "text_delta" ? `delta:${e.delta}` : e.type),
    notice: (text) => seen.push(`notice:${text}`),
  };
  return { reply, seen };
}

/** A backend whose send hands the prompt's reply to the test, to play a run on it. */
function scriptedBackend(result: SendResult) {
  const sent: Array<{ threadId: string; message: HttpMessage }> = [];
  let reply: PromptReply | undefined;
  const backend: HttpBackend = {
    command: async () => ({ status: "duplicate" }),
    gatewayStatus: async () => undefined,
    usageReport: async () => undefined,
    ...createEventCalls(undefined),
    access: async () => undefined,
    async send(threadId, message) {
      sent.push({ threadId, message });
      if (message.type === "prompt") reply = message.reply;
      return result;
    },
    thread: async (id) =>
      id.startsWith("http:")
        ? { status: "known", threadId: id }
        : { status: "invalid", reason: `bad ${id}` },
    threadsInMemory: async () => ({ threads: [] }),
    threadIdsOnDisk: async () => [],
    statuses: async (ids) => {
      if (ids.includes("http:api:gone")) throw new Error("no status for you");
      return [];
    },
    log: {
      ...createFileThreadLog("/nonexistent"),
      readAll: async () => {
        throw new Error("the worker reads the log itself");
      },
    },
  };
  return { backend, sent, reply: () => reply };
}

describe("HTTP backend across a message port", () => {
  it("answers a plain prompt in one message once its run ends: result, usage and end together", async () => {
    const script = scriptedBackend({ status: "queued", inboxId: "in-1", position: 0 });
    const { remote, posted } = connect(script.backend);
    const { reply, seen } = recorder("end");
    let resolved = false;
    const result = remote.send("http:api:a", prompt(reply)).then((r) => {
      resolved = true;
      return r;
    });
    await until(() => script.sent.length === 1);
    expect(script.sent[0]).toMatchObject({
      threadId: "http:api:a",
      message: { type: "prompt", text: "hi", userId: "u", userName: "U" },
    });
    expect(script.reply()?.events).toBe("end");
    expect(resolved).toBe(false); // the run has not ended: nothing has crossed yet
    script.reply()?.onEvent(usage);
    await later();
    expect(posted).toEqual([]);
    script.reply()?.onEvent(runEnd);
    expect(await result).toEqual({ status: "queued", inboxId: "in-1", position: 0 });
    expect(seen).toEqual(["usage", "run_end"]);
    expect(posted).toEqual(["sent"]);
  });

  it("streams a prompt's events after its result, in order, a turn's events in one batch", async () => {
    const script = scriptedBackend({ status: "queued", inboxId: "in-2", position: 1 });
    const { remote, posted } = connect(script.backend);
    const { reply, seen } = recorder("all");
    const result = await remote.send("http:api:b", prompt(reply));
    expect(result).toEqual({ status: "queued", inboxId: "in-2", position: 1 });
    for (const delta of ["a", "b", "c"]) script.reply()?.onEvent({ type: "text_delta", delta });
    script.reply()?.onEvent(runEnd);
    script.reply()?.onEvent({ type: "text_delta", delta: "after the end" });
    await until(() => seen.length >= 4);
    expect(seen).toEqual(["delta:a", "delta:b", "delta:c", "run_end"]);
    // What the run sent in one turn crossed as one batch (the delta after the end is dropped
    // by the worker's side: the reply is done).
    expect(posted).toEqual(["sent", "reply+reply+reply+reply+reply"]);
  });

  it("hands a busy prompt's notice to its reply along with the busy result", async () => {
    const backend: HttpBackend = {
      ...scriptedBackend({ status: "busy", queued: 5 }).backend,
      async send(_threadId, message) {
        if (message.type === "prompt") message.reply?.notice("busy, 5 queued");
        return { status: "busy", queued: 5 };
      },
    };
    const { remote, posted } = connect(backend);
    const { reply, seen } = recorder("end");
    const result = await remote.send("http:api:c", prompt(reply));
    expect(result).toEqual({ status: "busy", queued: 5 });
    expect(seen).toEqual(["notice:busy, 5 queued"]);
    expect(posted).toEqual(["sent"]);
  });

  it("resolves a reply-less prompt's `synced` once it is on disk, and rejects when the sync failed", async () => {
    let finish: (ok: boolean) => void = () => {};
    const onDisk = new Promise<void>((resolve, reject) => {
      finish = (ok) => (ok ? resolve() : reject(new Error("disk full")));
    });
    onDisk.catch(() => {});
    const script = scriptedBackend({
      status: "queued",
      inboxId: "in-3",
      position: 0,
      synced: onDisk,
    });
    const { remote } = connect(script.backend);
    const message = { type: "prompt", text: "x", userId: "u", userName: "U" } as const;
    const first = await remote.send("http:api:d", message);
    expect(first.status).toBe("queued");
    const synced = first.status === "queued" ? first.synced : undefined;
    expect(synced).toBeInstanceOf(Promise);
    let done = false;
    void synced?.then(() => {
      done = true;
    });
    await later();
    expect(done).toBe(false);
    finish(true);
    await synced;
    expect(done).toBe(true);

    const failing = new Promise<void>((_, reject) => setTimeout(() => reject(new Error("EIO")), 1));
    failing.catch(() => {});
    const second = await connect(
      scriptedBackend({ status: "queued", inboxId: "in-4", position: 0, synced: failing }).backend,
    ).remote.send("http:api:d", message);
    await expect(second.status === "queued" ? second.synced : undefined).rejects.toThrow("EIO");
  });

  it("takes a burst of requests a few per turn of the event loop, in order, letting due timers run between", async () => {
    const taken: string[] = [];
    let timerSaw: number | undefined;
    const backend: HttpBackend = {
      ...scriptedBackend({ status: "queued", inboxId: "-", position: 0 }).backend,
      send(threadId) {
        // A run's timer, due now: with the whole burst taken in one turn it would wait for all.
        if (taken.length === 0)
          setTimeout(() => {
            timerSaw = taken.length;
          }, 0);
        if (threadId.endsWith(":bad")) throw new Error(`cannot take ${threadId}`); // synchronously
        taken.push(threadId);
        const until = performance.now() + 0.2; // a prompt's intake costs the main thread time
        while (performance.now() < until) {}
        return Promise.resolve({ status: "queued", inboxId: threadId, position: 0 });
      },
    };
    const { remote } = connect(backend);
    const ids = Array.from({ length: 3 * REQUESTS_PER_TURN + 1 }, (_, i) => `http:api:t${i}`);
    const message = { type: "prompt", text: "x", userId: "u", userName: "U" } as const;
    // Sent in one turn: they cross as one batch.
    const bad = remote.send("http:api:bad", message).then(
      () => "taken",
      (error: Error) => error.message,
    );
    const results = await Promise.all(ids.map((id) => remote.send(id, message)));
    expect(await bad).toBe("cannot take http:api:bad");
    expect(taken).toEqual(ids);
    expect(results.map((r) => (r.status === "queued" ? r.inboxId : r.status))).toEqual(ids);
    expect(timerSaw).toBeGreaterThan(0);
    expect(timerSaw).toBeLessThan(ids.length);
  });

  it("answers lookups, and a backend's failure rejects with its message", async () => {
    const { remote } = connect(scriptedBackend({ status: "delivered" }).backend);
    expect(await remote.thread("http:api:e")).toEqual({ status: "known", threadId: "http:api:e" });
    expect(await remote.thread("nope")).toEqual({ status: "invalid", reason: "bad nope" });
    expect(await remote.threadsInMemory("http:api")).toEqual({ threads: [] });
    expect(await remote.statuses(["http:api:e"])).toEqual([]);
    // Calls go by name, but the backend is no promise: awaiting it gives it back.
    expect(await Promise.resolve(remote)).toBe(remote);
    await expect(remote.statuses(["http:api:gone"])).rejects.toThrow("no status for you");
    expect(await remote.send("http:api:e", { type: "abort" })).toEqual({ status: "delivered" });
  });

  it("reads a thread's log on the worker's side, through the state seam", async () => {
    const home = mkdtempSync(join(tmpdir(), "guppy-rpc-log-"));
    try {
      const dir = threadDirOf(home, "http:api:logged");
      mkdirSync(dir, { recursive: true });
      const path = join(dir, LOG_FILE);
      const entry = (n: number, isBot: boolean) => ({
        date: `2026-11-23T00:00:0${n}Z`,
        messageId: `m${n}`,
        userId: "ann",
        userName: "Ann",
        text: `line ${n}`,
        isBot,
      });
      // Whole lines, a foreign one, and a last line cut short by a crash.
      writeFileSync(
        path,
        `${JSON.stringify(entry(1, false))}\n{"other":true}\n${JSON.stringify(entry(2, true))}\n{"date":"2026`,
      );
      const { remote } = connect(scriptedBackend({ status: "delivered" }).backend, true, home);
      expect(await remote.log.readAll("http:api:logged")).toEqual([
        entry(1, false),
        entry(2, true),
      ]);
      // No file yet: an empty log.
      expect(await remote.log.readAll("http:api:new")).toEqual([]);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("streams one thread's gateway events until unsubscribed", async () => {
    const listeners = new Set<(event: OrchestratorEvent) => void>();
    const local = createLocalBackend({
      orchestrator: {
        ...noCommands,
        send: () => ({ status: "delivered" }),
        status: () => {
          throw new Error("unused");
        },
        threads: () => [],
      },
      store: {
        home: "/nonexistent",
        threadDir: (id) => `/nonexistent/${id}`,
        listThreads: () => [],
        appendLog: () => {},
      },
      subscribe: (listener) => {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    });
    // Counts what crosses the port: subscriptions made and ended on the main side.
    let opened = 0;
    let closed = 0;
    const counted: HttpBackend = {
      ...local,
      subscribe: (threadId, listener) => {
        opened++;
        const stop = local.subscribe?.(threadId, listener);
        return () => {
          closed++;
          stop?.();
        };
      },
    };
    const { remote } = connect(counted);
    const seen: OrchestratorEvent[] = [];
    const unsubscribe = remote.subscribe?.("http:api:f", (e) => seen.push(e));
    await until(() => listeners.size === 1);
    expect(listeners.size).toBe(1);
    // A second stream on another spelling of another thread shares the one gateway listener.
    const short: OrchestratorEvent[] = [];
    const unsubscribeShort = remote.subscribe?.("http:g", (e) => short.push(e));
    await until(() => opened === 2);
    expect(listeners.size).toBe(1);
    for (const listener of listeners) {
      listener({ type: "busy", threadId: "http:api:other", queued: 1 });
      listener({ type: "busy", threadId: "http:api:f", queued: 2 });
      listener({ type: "busy", threadId: "http:g:default", queued: 3 });
    }
    await until(() => seen.length > 0 && short.length > 0);
    expect(seen).toEqual([{ type: "busy", threadId: "http:api:f", queued: 2 }]);
    expect(short).toEqual([{ type: "busy", threadId: "http:g:default", queued: 3 }]);
    unsubscribe?.();
    await until(() => closed === 1);
    expect(listeners.size).toBe(1);
    unsubscribeShort?.();
    await until(() => listeners.size === 0);
    expect(listeners.size).toBe(0);
    expect(connect(local, false).remote.subscribe).toBeUndefined();
  });
});

describe("local HTTP backend", () => {
  it("answers GET /v1/usage's call across the port from the ledger it is given; none without", async () => {
    const home = mkdtempSync(join(tmpdir(), "guppy-usage-rpc-"));
    try {
      const record = (time: string, thread: string, input: number, cost: number) =>
        JSON.stringify({
          time,
          thread,
          model: "p/m",
          input,
          cacheRead: 5,
          cacheWrite: 0,
          output: 7,
          cost,
        });
      writeFileSync(
        join(home, USAGE_FILE),
        `${[
          record("2026-03-09T23:00:00.000Z", "http:api:a", 100, 0.5),
          record("2026-03-10T10:00:00.000Z", "http:api:a~sub-1", 200, 0.25),
          record("2026-03-10T11:00:00.000Z", "http:api:b", 300, 1),
          // Outside the two days asked for.
          record("2026-03-01T11:00:00.000Z", "http:api:b", 999, 9),
        ].join("\n")}\n`,
      );
      const orchestrator = {
        ...noCommands,
        send: (): SendResult => ({ status: "delivered" }),
        status: () => {
          throw new Error("unused");
        },
        threads: () => [],
      };
      const store = {
        home: "/nonexistent",
        threadDir: (id: string) => `/nonexistent/${id}`,
        listThreads: () => [],
        appendLog: () => {},
      };
      const now = new Date("2026-03-10T12:00:00.000Z");
      const { remote } = connect(
        createLocalBackend({
          orchestrator,
          store,
          usageReport: (request) => readUsageReport({ home, timeZone: "UTC", now, ...request }),
        }),
      );
      const byThread = await remote.usageReport({ days: 2, by: "thread" });
      expect(byThread).toMatchObject({ from: "2026-03-09", to: "2026-03-10", skipped: 0 });
      expect(byThread?.rows.map((r) => [r.key, r.requests, r.input, r.cost])).toEqual([
        ["http:api:b", 1, 300, 1],
        ["http:api:a", 2, 300, 0.75],
      ]);
      expect(byThread?.total).toMatchObject({ requests: 3, input: 600, cacheRead: 15, output: 21 });
      const byDay = await remote.usageReport({ days: 2, by: "day" });
      expect(byDay?.rows.map((r) => [r.key, r.requests])).toEqual([
        ["2026-03-09", 1],
        ["2026-03-10", 2],
      ]);
      // A gateway not given the ledger has no report (GET /v1/usage: 503).
      const { remote: bare } = connect(createLocalBackend({ orchestrator, store }));
      expect(await bare.usageReport({ days: 30, by: "day" })).toBeUndefined();
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("checks thread ids and passes a plain answer only its usage and end", async () => {
    const sent: unknown[] = [];
    const local = createLocalBackend({
      orchestrator: {
        ...noCommands,
        send: (_threadId, message) => {
          sent.push(message);
          if (message.type === "prompt") {
            for (const e of [usage, { type: "text_delta", delta: "x" } as const, runEnd])
              message.thread?.onEvent?.(e);
          }
          return { status: "queued", inboxId: "i", position: 0 };
        },
        status: (threadId) => ({
          threadId,
          state: "inactive",
          queued: 0,
          model: "m",
          messages: 0,
          contextTokens: 0,
          contextWindow: 1,
          compactions: 0,
          cost: 0,
          ...(threadId === "http:api:seen" ? { lastActivity: "2026-11-23T00:00:00Z" } : {}),
        }),
        threads: () => [],
      },
      store: {
        home: "/nonexistent",
        threadDir: (id) => `/nonexistent/${id}`,
        listThreads: () => [],
        appendLog: () => {},
      },
    });
    expect(await local.thread("http:api:seen")).toEqual({
      status: "known",
      threadId: "http:api:seen",
    });
    expect(await local.thread("http:api:new")).toEqual({
      status: "unknown",
      threadId: "http:api:new",
    });
    // Another spelling of a thread id is given back as the gateway spells it.
    expect(await local.thread("http:api")).toEqual({
      status: "unknown",
      threadId: "http:api:default",
    });
    expect((await local.thread("no colon")).status).toBe("invalid");
    const { reply, seen } = recorder("end");
    await local.send("http:api:x", {
      type: "prompt",
      text: "t",
      userId: "u",
      userName: "U",
      reply,
    });
    expect(seen).toEqual(["usage", "run_end"]);
    expect(sent[0]).toMatchObject({ type: "prompt", text: "t", deferSync: true });
  });

  it("ends a plain answer with the text a stream of the same run gives", async () => {
    const run: RunnerEvent[] = [
      { type: "text_delta", delta: "Let me check. " },
      { type: "tool_call", toolCallId: "1", name: "bash", args: {} },
      { type: "tool_result", toolCallId: "1", name: "bash", isError: false, text: "ok" },
      usage,
      { type: "text_delta", delta: "after " },
      { type: "text_delta", delta: "tool" },
      { type: "run_end", text: "after tool", stopReason: "stop" },
    ];
    const local = createLocalBackend({
      orchestrator: {
        ...noCommands,
        send: (_threadId, message) => {
          if (message.type === "prompt") for (const e of run) message.thread?.onEvent?.(e);
          return { status: "queued", inboxId: "i", position: 0 };
        },
        status: () => {
          throw new Error("unused");
        },
        threads: () => [],
      },
      store: {
        home: "/nonexistent",
        threadDir: (id) => `/nonexistent/${id}`,
        listThreads: () => [],
        appendLog: () => {},
      },
    });
    const ends: Record<string, string> = {};
    for (const events of ["end", "all"] as const) {
      let streamed = "";
      await local.send("http:api:x", {
        ...prompt({
          events,
          onEvent(e) {
            if (e.type === "text_delta") streamed += e.delta;
            if (e.type === "run_end") ends[events] = events === "end" ? e.text : streamed;
          },
          notice: () => {},
        }),
      });
    }
    expect(ends.end).toBe("Let me check. \n\nafter tool");
    // The "all" reply gets the run's own events: the worker builds the same text from them.
    expect(ends.all).toBe("Let me check. after tool");
  });
});
