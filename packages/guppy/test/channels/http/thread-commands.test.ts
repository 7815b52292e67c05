import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MessageChannel } from "node:worker_threads";
import {
  createAgentRunner,
  createOrchestrator,
  createStore,
  type OrchestratorEvent,
  type RuntimeOrchestrator,
} from "@guppy/core";
import {
  type Context,
  type FauxProviderRegistration,
  fauxAssistantMessage,
  registerFauxProvider,
} from "@mariozechner/pi-ai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createRemoteBackend, serveBackend } from "../../../src/channels/http/backend-rpc.js";
import { createHttpApp } from "../../../src/channels/http/create-http-app.js";
import { createLocalBackend } from "../../../src/channels/http/http-backend.js";

const TOKEN = "a-token-of-some-length";

/**
 * POST /v1/threads/{id}/new and …/compact, GET …/status, and the 409 for a thread a `guppy chat`
 * holds: a real orchestrator (faux model) behind the routes, across the worker's message port.
 */
describe("thread commands and status over the HTTP API", () => {
  let home: string;
  let faux: FauxProviderRegistration;
  let orchestrator: RuntimeOrchestrator;
  let held: Set<string>;
  let close: () => void;
  let request: (method: string, path: string, body?: unknown) => Promise<Response>;

  beforeEach(async () => {
    home = mkdtempSync(join(tmpdir(), "guppy-thread-commands-"));
    faux = registerFauxProvider({ models: [{ id: "faux-1", contextWindow: 100_000 }] });
    faux.setResponses(
      Array.from({ length: 50 }, () => (context: Context) => {
        const system = typeof context.systemPrompt === "string" ? context.systemPrompt : "";
        return fauxAssistantMessage(system.includes("compactor") ? "a summary" : "an answer");
      }),
    );
    held = new Set();
    const store = createStore({ home });
    orchestrator = createOrchestrator({
      store,
      maxConcurrent: 2,
      queueDepth: 5,
      idleTimeoutMs: 60_000,
      sandbox: "bubblewrap (test line)",
      heldElsewhere: (id) => (held.has(id) ? `${id} is open in guppy chat (pid 42)` : undefined),
      createRunner: (threadId) =>
        createAgentRunner({
          threadId,
          store,
          model: faux.getModel(),
          apiKey: "faux",
          systemPrompt: "test",
          tools: [],
          maxToolRounds: 5,
          maxRetries: 0,
          compactKeepRecentTokens: 5,
        }),
    });
    await orchestrator.start();
    const { port1, port2 } = new MessageChannel();
    const stop = serveBackend(
      port1,
      createLocalBackend({ orchestrator, store, subscribe: orchestrator.subscribe }),
    );
    close = () => {
      stop();
      port1.close();
      port2.close();
    };
    const app = createHttpApp({
      backend: createRemoteBackend(port2, { events: true, home }),
      token: TOKEN,
      tokenHint: "test",
      modelName: "m",
    });
    request = (method, path, body) =>
      Promise.resolve(
        app.request(path, {
          method,
          headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        }),
      );
  });
  afterEach(async () => {
    close();
    await orchestrator.shutdown(0);
    faux.unregister();
    rmSync(home, { recursive: true, force: true });
  });

  /** Sends prompts to the thread and waits until each has been answered. */
  const converse = async (threadId: string, texts: string[]) => {
    let ended = 0;
    const done = new Promise<void>((resolve) => {
      const stop = orchestrator.subscribe((e: OrchestratorEvent) => {
        if (e.type === "runner" && e.event.type === "run_end" && ++ended === texts.length) {
          stop();
          resolve();
        }
      });
    });
    for (const text of texts) {
      const r = await request("POST", `/v1/threads/${threadId}/messages`, { text });
      expect(r.status).toBe(202);
    }
    await done;
  };

  it("GET …/status gives the thread as GET /v1/threads lists it, with compactions, the last usage and the sandbox", async () => {
    await converse("http:api:s", ["one"]);
    const r = await request("GET", "/v1/threads/http:api:s/status");
    expect(r.status).toBe(200);
    const status = (await r.json()) as Record<string, unknown>;
    expect(status).toMatchObject({
      id: "http:api:s",
      state: "idle",
      queued: 0,
      messages: 2,
      compactions: 0,
      tokens: { context_window: 100_000 },
    });
    expect(status.last_usage).toMatchObject({ input: expect.any(Number), cost: 0 });
    const listed = (await (await request("GET", "/v1/threads")).json()) as {
      threads: Array<Record<string, unknown>>;
    };
    expect(status.compaction_fallbacks).toBe(0);
    // Where the thread's tools run, as the orchestrator was told.
    expect(status.sandbox).toBe("bubblewrap (test line)");
    const {
      compactions: _c,
      compaction_fallbacks: _f,
      last_usage: _u,
      sandbox: _s,
      ...listedShape
    } = status;
    expect(listed.threads).toEqual([listedShape]);
    expect((await request("GET", "/v1/threads/http:api:nothing/status")).status).toBe(404);
  });

  it("POST …/new archives the context and starts fresh; POST …/compact summarises it", async () => {
    await converse("http:api:c", ["one", "two", "three"]);
    const compacted = await request("POST", "/v1/threads/http:api:c/compact");
    expect(compacted.status).toBe(200);
    const report = (await compacted.json()) as { status: string; report: string };
    expect(report.status).toBe("compacted");
    expect(report.report).toMatch(/summar/i);
    const status = (await (await request("GET", "/v1/threads/http:api:c/status")).json()) as {
      compactions: number;
    };
    expect(status.compactions).toBe(1);

    const reset = await request("POST", "/v1/threads/http:api:c/new", { message_id: "n1" });
    expect(reset.status).toBe(200);
    const body = (await reset.json()) as { status: string; thread_id: string; archived: string };
    expect(body).toMatchObject({ status: "reset", thread_id: "http:api:c" });
    expect(existsSync(body.archived)).toBe(true);
    const after = (await (await request("GET", "/v1/threads/http:api:c/status")).json()) as {
      messages: number;
    };
    expect(after.messages).toBe(0);
    // The same /new again (its message_id) is a duplicate; an unknown thread a 404.
    const again = await request("POST", "/v1/threads/http:api:c/new", { message_id: "n1" });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: { type: string } }).error.type).toBe("duplicate");
    expect((await request("POST", "/v1/threads/http:api:none/compact")).status).toBe(404);
  });

  it("answers 409 held_elsewhere for a thread a guppy chat holds: messages, /new, /compact, steer, abort", async () => {
    const id = "cli:local:default";
    await converse(id, ["before the chat"]);
    held.add(id);
    const attempts = [
      request("POST", `/v1/threads/${id}/messages`, { text: "hello" }),
      request("POST", `/v1/threads/${id}/new`),
      request("POST", `/v1/threads/${id}/compact`),
      request("POST", `/v1/threads/${id}/steer`, { text: "this way" }),
      request("POST", `/v1/threads/${id}/abort`),
    ];
    for (const r of await Promise.all(attempts)) {
      expect(r.status).toBe(409);
      expect(await r.json()).toEqual({
        error: {
          message: `Not accepted: ${id} is open in guppy chat (pid 42).`,
          type: "held_elsewhere",
        },
      });
    }
    expect(orchestrator.counters().accepted).toBe(1);
    // Other threads run as ever.
    await converse("http:api:free", ["free"]);
  });
});
