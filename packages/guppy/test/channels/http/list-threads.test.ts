import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MessageChannel } from "node:worker_threads";
import { createOrchestrator, createStore } from "@guppy/core";
import { afterEach, describe, expect, it } from "vitest";
import { createRemoteBackend, serveBackend } from "../../../src/channels/http/backend-rpc.js";
import { createHttpApp } from "../../../src/channels/http/create-http-app.js";
import { createLocalBackend, type HttpBackend } from "../../../src/channels/http/http-backend.js";
import { listThreadDirs } from "../../../src/channels/http/list-thread-dirs.js";
import { listThreads, STATUSES_PER_CALL } from "../../../src/channels/http/list-threads.js";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/**
 * A GUPPY_HOME with `count` HTTP threads on disk (each with a status.json saying how many
 * messages it has: its number) and one thread only in memory, served across a message port as
 * the HTTP worker sees it. `onMain` counts what the agents' thread was asked.
 */
function gateway(count: number) {
  const home = mkdtempSync(join(tmpdir(), "guppy-list-threads-"));
  cleanups.push(() => rmSync(home, { recursive: true, force: true }));
  for (let i = 0; i < count; i++) {
    const dir = join(home, "http", `user${i % 3}`, `t${i}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, "status.json"),
      JSON.stringify({
        lastActivity: "2026-01-01T00:00:00.000Z",
        messages: i,
        contextTokens: 10,
        contextWindow: 1000,
        compactions: 0,
        cost: 0,
      }),
    );
  }
  const store = createStore({ home });
  const onMain = { walks: 0, statusCalls: [] as number[] };
  const countedStore = {
    ...store,
    listThreads: () => {
      onMain.walks++;
      return store.listThreads();
    },
  };
  const orchestrator = createOrchestrator({
    store: countedStore,
    maxConcurrent: 1,
    queueDepth: 1,
    idleTimeoutMs: 60_000,
    createRunner: () => {
      throw new Error("no runs here");
    },
  });
  // A thread with an actor and no directory yet (a steer with a channel message id to a new
  // thread makes one: the id is kept until the thread goes idle).
  orchestrator.send("http:api:in-memory", { type: "steer", text: "x", messageId: "m-1" });
  const local = createLocalBackend({ orchestrator, store: countedStore });
  const counted: HttpBackend = {
    ...local,
    statuses: (ids) => {
      onMain.statusCalls.push(ids.length);
      return local.statuses(ids);
    },
  };
  const { port1, port2 } = new MessageChannel();
  const stop = serveBackend(port1, counted);
  cleanups.push(() => {
    stop();
    port1.close();
    port2.close();
  });
  return { backend: createRemoteBackend(port2, { events: false, home }), onMain };
}

describe("listThreadDirs (the HTTP worker's walk)", () => {
  it("finds the threads the store's own listing finds, however their ids are spelt on disk", async () => {
    const home = mkdtempSync(join(tmpdir(), "guppy-thread-dirs-"));
    cleanups.push(() => rmSync(home, { recursive: true, force: true }));
    const store = createStore({ home });
    const ids = [
      "http:api:default",
      "http:alice%3Ax:notes",
      "http:用户:t 1",
      "telegram:123",
      "slack:C1:1234.5678",
      "cli:local:.hidden-looking",
      "discord:g:c:t",
      `http:${"u".repeat(120)}:${"t".repeat(130)}`,
      `slack:${"c".repeat(100)}`,
    ];
    for (const id of ids) {
      await store.openFiles(id);
      store.closeFiles(id);
    }
    // What is not a thread: global and per-channel skills, data directories, a user's own names.
    for (const dir of ["skills/x", "memory/202601", "logs", "access/telegram", ".git/objects"]) {
      mkdirSync(join(home, dir), { recursive: true });
    }
    mkdirSync(join(home, "http", "skills", "s"), { recursive: true });
    mkdirSync(join(home, "http", "api", "skills"), { recursive: true });
    mkdirSync(join(home, "Notes", "a", "b"), { recursive: true });
    mkdirSync(join(home, "http", "bad%E0%A4", "t"), { recursive: true });
    writeFileSync(join(home, "http", "api", "a-file"), "");
    symlinkSync(join(home, "http", "api", "default"), join(home, "http", "api", "linked"));

    const expected = store.listThreads().sort();
    expect(expected).toContain("telegram:123:default");
    expect(expected).toContain("http:api:linked");
    expect((await listThreadDirs(home)).sort()).toEqual(expected);
    expect(await listThreadDirs(join(home, "nonexistent"))).toEqual([]);
  });
});

describe("listing threads", () => {
  it("lists every thread once, sorted, without listing directories or reading many files on the agents' thread", async () => {
    const count = 2 * STATUSES_PER_CALL + 7;
    const { backend, onMain } = gateway(count);
    const { threads, next } = await listThreads(backend);
    const expected = [
      "http:api:in-memory",
      ...Array.from({ length: count }, (_, i) => `http:user${i % 3}:t${i}`),
    ].sort();
    expect(threads.map((t) => t.threadId)).toEqual(expected);
    expect(next).toBeNull();
    const t5 = threads.find((t) => t.threadId === "http:user2:t5");
    expect(t5).toMatchObject({ state: "inactive", messages: 5, contextTokens: 10 });
    expect(onMain.walks).toBe(0);
    expect(onMain.statusCalls.every((n) => n <= STATUSES_PER_CALL)).toBe(true);
    expect(onMain.statusCalls.reduce((a, b) => a + b, 0)).toBe(count);
  });

  it("pages with limit and after, the pages together being the whole listing", async () => {
    const { backend, onMain } = gateway(25);
    const whole = (await listThreads(backend)).threads.map((t) => t.threadId);
    onMain.statusCalls.length = 0;
    const pages: string[][] = [];
    let after: string | undefined;
    for (;;) {
      const page = await listThreads(backend, { limit: 10, ...(after ? { after } : {}) });
      pages.push(page.threads.map((t) => t.threadId));
      if (page.next === null) break;
      expect(page.next).toBe(page.threads.at(-1)?.threadId);
      after = page.next;
    }
    expect(pages.map((p) => p.length)).toEqual([10, 10, 6]);
    expect(pages.flat()).toEqual(whole);
    // A page reads the statuses of its own threads only.
    expect(Math.max(...onMain.statusCalls)).toBeLessThanOrEqual(10);
    // Any spelling of a thread id is a cursor: "http:api" is "http:api:default".
    const afterShort = await listThreads(backend, { after: "http:api", limit: 1 });
    expect(afterShort.threads.map((t) => t.threadId)).toEqual(["http:api:in-memory"]);
  });

  it("answers GET /v1/threads with a next cursor, and a one-line 400 for a bad limit or after", async () => {
    const { backend } = gateway(3);
    const token = "a-token-of-some-length";
    const app = createHttpApp({ backend, token, tokenHint: "test", modelName: "m" });
    const get = async (query: string) => {
      const r = await app.request(`/v1/threads${query}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      return { status: r.status, body: (await r.json()) as Record<string, unknown> };
    };
    const all = await get("");
    expect(all.status).toBe(200);
    expect((all.body.threads as unknown[]).length).toBe(4);
    expect(all.body.next).toBeNull();
    const first = await get("?limit=2");
    expect((first.body.threads as Array<{ id: string }>).map((t) => t.id)).toEqual([
      "http:api:in-memory",
      "http:user0:t0",
    ]);
    expect(first.body.next).toBe("http:user0:t0");
    const rest = await get(`?limit=2&after=${encodeURIComponent("http:user0:t0")}`);
    expect((rest.body.threads as Array<{ id: string }>).map((t) => t.id)).toEqual([
      "http:user1:t1",
      "http:user2:t2",
    ]);
    expect(rest.body.next).toBeNull();
    for (const [query, message] of [
      ["?limit=0", '`limit` must be a whole number from 1 to 999999999, not "0".'],
      ["?limit=ten", '`limit` must be a whole number from 1 to 999999999, not "ten".'],
      ["?after=NOT%20AN%20ID", "`after` must be a thread id: Invalid thread id"],
    ] as const) {
      const bad = await get(query);
      expect(bad.status).toBe(400);
      expect((bad.body.error as { message: string }).message.startsWith(message)).toBe(true);
    }
  });
});
