import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Api, Model } from "@mariozechner/pi-ai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAgentRunner } from "../../src/runner/create-agent-runner.js";
import { createStore, type Store } from "../../src/store/create-store.js";

/** What the misbehaving provider does with the n-th request (0-based). */
type Behaviour = (n: number, req: IncomingMessage, res: ServerResponse) => void;

/** A Chat Completions answer streamed as SSE: `text` in one chunk, then stop and [DONE]. */
function answer(res: ServerResponse, text: string) {
  res.writeHead(200, { "content-type": "text/event-stream" });
  const chunk = (delta: object, finish: string | null) =>
    `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  res.write(chunk({ role: "assistant", content: text }, null));
  res.write(chunk({}, "stop"));
  res.end("data: [DONE]\n\n");
}

describe("model requests against a misbehaving provider (real HTTP)", () => {
  let home: string;
  let store: Store;
  let server: Server;
  let behaviour: Behaviour;
  let requests: number;
  const sockets = new Set<import("node:net").Socket>();

  beforeEach(async () => {
    home = mkdtempSync(join(tmpdir(), "guppy-retry-"));
    store = createStore({ home });
    requests = 0;
    server = createServer((req, res) => {
      const n = requests++;
      req.resume();
      req.on("end", () => behaviour(n, req, res));
    });
    server.on("connection", (s) => {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  });
  afterEach(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
    rmSync(home, { recursive: true, force: true });
  });

  const model = (api: Api = "openai-completions"): Model<Api> => ({
    id: "m",
    name: "m",
    api,
    provider: "test",
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}${api === "anthropic-messages" ? "" : "/v1"}`,
    reasoning: false,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 100_000,
    maxTokens: 1000,
  });

  const runner = (
    extra: { maxRetries?: number; maxAnswerChars?: number; idleSeconds?: number; api?: Api } = {},
  ) =>
    createAgentRunner({
      threadId: "cli:local:retry",
      store,
      model: model(extra.api),
      apiKey: "k",
      systemPrompt: "test",
      tools: [],
      maxToolRounds: 5,
      maxRetries: extra.maxRetries ?? 3,
      maxRetryWaitSeconds: 60,
      maxAnswerChars: extra.maxAnswerChars ?? 200_000,
      retryBaseDelayMs: 20,
      streamIdleTimeoutSeconds: extra.idleSeconds ?? 300,
    });

  it("fails at once when the provider asks to wait longer than GUPPY_MAX_RETRY_WAIT_SECONDS", async () => {
    behaviour = (_n, _req, res) => {
      res.writeHead(429, { "content-type": "application/json", "retry-after": "3600" });
      res.end(JSON.stringify({ error: { message: "Rate limited", type: "rate_limit" } }));
    };
    const started = Date.now();
    const result = await runner().prompt({ text: "hi" });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(requests).toBe(1);
    expect(result.stopReason).toBe("error");
    expect(result.errorMessage).toMatch(/^429 /);
    expect(result.errorMessage).toContain(
      "the provider asked to wait 3600 s before retrying, more than GUPPY_MAX_RETRY_WAIT_SECONDS (60)",
    );
  });

  it("reads retry-after from an Anthropic Messages endpoint too", async () => {
    behaviour = (_n, _req, res) => {
      res.writeHead(429, { "content-type": "application/json", "retry-after": "3600" });
      res.end(
        JSON.stringify({
          type: "error",
          error: { type: "rate_limit_error", message: "Slow down" },
        }),
      );
    };
    const result = await runner({ api: "anthropic-messages" }).prompt({ text: "hi" });
    expect(requests).toBe(1);
    expect(result.stopReason).toBe("error");
    expect(result.errorMessage).toContain("the provider asked to wait 3600 s before retrying");
  });

  it("retries a 429 after the retry-after it gave and answers", async () => {
    behaviour = (n, _req, res) => {
      if (n === 0) {
        res.writeHead(429, { "content-type": "application/json", "retry-after": "1" });
        res.end(JSON.stringify({ error: { message: "slow down" } }));
      } else answer(res, "hello after waiting");
    };
    const started = Date.now();
    const result = await runner().prompt({ text: "hi" });
    expect(result.stopReason).toBe("stop");
    expect(result.text).toBe("hello after waiting");
    expect(requests).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it("retries a dropped connection and a 503, and gives up after GUPPY_MAX_RETRIES", async () => {
    behaviour = (n, req, res) => {
      if (n === 0) req.socket.destroy();
      else if (n === 1) {
        res.writeHead(503);
        res.end("busy");
      } else answer(res, "third time");
    };
    expect((await runner().prompt({ text: "hi" })).text).toBe("third time");
    expect(requests).toBe(3);

    requests = 0;
    behaviour = (_n, _req, res) => {
      res.writeHead(500);
      res.end("down");
    };
    const result = await runner({ maxRetries: 2 }).prompt({ text: "hi" });
    expect(result.stopReason).toBe("error");
    expect(requests).toBe(3);
  });

  it("does not retry a 400", async () => {
    behaviour = (_n, _req, res) => {
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "bad request" } }));
    };
    const result = await runner().prompt({ text: "hi" });
    expect(result.stopReason).toBe("error");
    expect(requests).toBe(1);
  });

  it("an abort during a retry wait ends the run at once, as aborted", async () => {
    behaviour = (_n, _req, res) => {
      res.writeHead(429, { "content-type": "application/json", "retry-after": "50" });
      res.end(JSON.stringify({ error: { message: "Rate limited" } }));
    };
    const r = runner();
    const run = r.prompt({ text: "hi" });
    while (requests === 0) await new Promise((res) => setTimeout(res, 10));
    await new Promise((res) => setTimeout(res, 200));
    const abortedAt = Date.now();
    r.abort();
    const result = await run;
    expect(Date.now() - abortedAt).toBeLessThan(10_000);
    expect(result.stopReason).toBe("aborted");
    expect(requests).toBe(1);
  });

  it("an abort while the provider has not answered (stalled connect) or stalls mid-stream ends the run at once", async () => {
    // Headers never come.
    behaviour = () => {};
    let r = runner();
    let run = r.prompt({ text: "hi" });
    while (requests === 0) await new Promise((res) => setTimeout(res, 10));
    let abortedAt = Date.now();
    r.abort();
    expect((await run).stopReason).toBe("aborted");
    expect(Date.now() - abortedAt).toBeLessThan(10_000);

    // Headers and a first chunk, then nothing.
    requests = 0;
    behaviour = (_n, _req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(
        `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { role: "assistant", content: "partial" }, finish_reason: null }] })}\n\n`,
      );
    };
    r = runner();
    run = r.prompt({ text: "hi" });
    while (requests === 0) await new Promise((res) => setTimeout(res, 10));
    await new Promise((res) => setTimeout(res, 200));
    abortedAt = Date.now();
    r.abort();
    const result = await run;
    expect(result.stopReason).toBe("aborted");
    expect(result.text).toBe("partial");
    expect(Date.now() - abortedAt).toBeLessThan(10_000);
  });

  it("the idle watch ends a run whose provider never answers, and one waiting to retry", async () => {
    behaviour = () => {};
    let t0 = Date.now();
    let result = await runner({ idleSeconds: 1 }).prompt({ text: "hi" });
    expect(Date.now() - t0).toBeLessThan(2_500);
    expect(result.stopReason).toBe("error");
    expect(result.errorMessage).toContain("GUPPY_STREAM_IDLE_TIMEOUT_SECONDS");

    behaviour = (_n, _req, res) => {
      res.writeHead(429, { "content-type": "application/json", "retry-after": "30" });
      res.end(JSON.stringify({ error: { message: "Rate limited" } }));
    };
    t0 = Date.now();
    result = await runner({ idleSeconds: 1 }).prompt({ text: "hi" });
    expect(Date.now() - t0).toBeLessThan(2_500);
    expect(result.stopReason).toBe("error");
    expect(result.errorMessage).toContain("GUPPY_STREAM_IDLE_TIMEOUT_SECONDS");
  });

  it("cuts an answer past GUPPY_MAX_ANSWER_CHARS, keeps what came and says why", async () => {
    let written = 0;
    let closed = false;
    behaviour = (_n, req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      const piece = "x".repeat(10_000);
      const line = `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] })}\n\n`;
      req.socket.on("close", () => {
        closed = true;
      });
      // 50 MB of answer, as fast as the client reads it.
      const pump = () => {
        while (written < 5_000 && !closed) {
          written++;
          if (!res.write(line)) return void res.once("drain", pump);
        }
        res.end("data: [DONE]\n\n");
      };
      pump();
    };
    const result = await runner({ maxAnswerChars: 50_000 }).prompt({ text: "hi" });
    expect(result.stopReason).toBe("error");
    expect(result.errorMessage).toContain("GUPPY_MAX_ANSWER_CHARS");
    expect(result.text.length).toBeGreaterThanOrEqual(50_000);
    expect(result.text.length).toBeLessThanOrEqual(60_000);
    // The client stopped reading: far less than the 50 MB was sent.
    expect(written).toBeLessThan(1_000);
    const log = store.readLog("cli:local:retry");
    expect(JSON.stringify(log).length).toBeLessThan(200_000);
  });
});
