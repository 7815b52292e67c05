import { existsSync, readFileSync, statSync } from "node:fs";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { tempHome } from "../helpers/run-cli.js";
import {
  readSse,
  type ServeProcess,
  startServe,
  threadMessages,
  waitFor,
} from "./serve-harness.js";

/** A misbehaving Chat Completions provider: `respond` says what each request gets. */
async function provider(respond: (res: ServerResponse, socket: Socket) => void) {
  const sockets = new Set<Socket>();
  let requests = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      requests++;
      respond(res, req.socket);
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    requests: () => requests,
    env: (): Record<string, string> => ({
      GUPPY_MODEL: "openai/mock-gpt",
      GUPPY_BASE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
      GUPPY_API: "openai-completions",
      GUPPY_API_KEY: "test-key",
      GUPPY_MAX_RETRIES: "3",
      GUPPY_SHUTDOWN_GRACE_SECONDS: "1",
    }),
    stop: () => {
      for (const s of sockets) s.destroy();
      return new Promise((r) => server.close(r));
    },
  };
}

const rateLimited = (seconds: number) => (res: ServerResponse) => {
  res.writeHead(429, { "content-type": "application/json", "retry-after": String(seconds) });
  res.end(JSON.stringify({ error: { message: "Rate limited", type: "rate_limit" } }));
};

/** A short normal answer (to warm a thread up: /events needs a thread that exists). */
const hello = (res: ServerResponse) => {
  res.writeHead(200, { "content-type": "text/event-stream" });
  const chunk = (delta: object, finish: string | null) =>
    `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  res.write(chunk({ role: "assistant", content: "hello" }, null));
  res.write(chunk({}, "stop"));
  res.end("data: [DONE]\n\n");
};

/** Posts a first prompt to `id` and waits for its answer. */
async function warmUp(s: ServeProcess, id: string) {
  await s.api(`/v1/threads/${id}/messages`, {
    method: "POST",
    body: JSON.stringify({ text: "warm up" }),
  });
  await waitFor(async () => ((await threadMessages(s, id)).length === 2 ? true : undefined));
}

const running = async (s: ServeProcess, id: string) => {
  const r = (await (await s.api("/v1/threads")).json()) as {
    threads: Array<{ id: string; state: string }>;
  };
  return r.threads.find((t) => t.id === id)?.state === "running";
};

describe("a provider that asks guppy to wait (guppy serve)", () => {
  const stops: Array<() => unknown> = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });

  async function setup(respond: (res: ServerResponse, socket: Socket) => void) {
    const llm = await provider(respond);
    stops.push(llm.stop);
    const { home, cleanup } = tempHome();
    stops.push(cleanup);
    const s = await startServe(home, llm.env());
    stops.push(async () => {
      if (s.child.exitCode === null) {
        s.child.kill("SIGKILL");
        await s.exited;
      }
    });
    return { llm, home, s };
  }

  it("a retry-after past GUPPY_MAX_RETRY_WAIT_SECONDS fails at once; abort ends a retry wait at once", async () => {
    let respond = hello;
    const { llm, home, s } = await setup((res) => respond(res));
    const id = "http:api:wait";
    await warmUp(s, id);
    respond = rateLimited(3600);
    const events = await s.api(`/v1/threads/${id}/events`);
    const finals = readSse(events, (event) => event === "final" && ++seen === 2);
    let seen = 0;
    const t0 = Date.now();
    await s.api(`/v1/threads/${id}/messages`, {
      method: "POST",
      body: JSON.stringify({ text: "hello" }),
    });
    await waitFor(async () => (llm.requests() === 2 && !(await running(s, id)) ? true : undefined));
    expect(Date.now() - t0).toBeLessThan(5_000);

    // Now a wait guppy accepts (50 s): the run waits, and an abort ends it at once.
    respond = rateLimited(50);
    await s.api(`/v1/threads/${id}/messages`, {
      method: "POST",
      body: JSON.stringify({ text: "again" }),
    });
    await waitFor(() => (llm.requests() === 3 ? true : undefined));
    await new Promise((r) => setTimeout(r, 300));
    expect(await running(s, id)).toBe(true);
    const abortedAt = Date.now();
    const abort = await s.api(`/v1/threads/${id}/abort`, { method: "POST" });
    expect(abort.status).toBe(200);
    const all = await finals;
    const stream = all.filter((e) => e.event === "final").map((e) => e.data);
    expect(Date.now() - abortedAt).toBeLessThan(10_000);
    expect(stream[0]).toMatchObject({ stop_reason: "error" });
    expect(String(stream[0]?.error)).toContain(
      "the provider asked to wait 3600 s before retrying, more than GUPPY_MAX_RETRY_WAIT_SECONDS (60)",
    );
    expect(stream[1]).toMatchObject({ stop_reason: "aborted" });
    // The gateway log says why the run was quiet.
    expect(readFileSync(join(home, "logs", "gateway.log"), "utf8")).toMatch(
      /Model request of http:api:wait failed; retry 1 of 3 in 50\.0 s/,
    );
    expect(llm.requests()).toBe(3);
  });

  it("SIGTERM with a run in a retry wait exits within grace + 5 s and records the run as stopped", async () => {
    const { llm, home, s } = await setup(rateLimited(50));
    const id = "http:api:term";
    await s.api(`/v1/threads/${id}/messages`, {
      method: "POST",
      body: JSON.stringify({ text: "stuck prompt" }),
    });
    await waitFor(() => (llm.requests() === 1 ? true : undefined));
    await new Promise((r) => setTimeout(r, 300));
    const t0 = Date.now();
    s.child.kill("SIGTERM");
    const code = await s.exited;
    // GUPPY_SHUTDOWN_GRACE_SECONDS=1: the run is aborted after 1 s and ends at once.
    expect(Date.now() - t0).toBeLessThan(1_000 + 5_000);
    expect(code).toBe(0);
    const dir = join(home, "http", "api", "term");
    const log = readFileSync(join(dir, "log.jsonl"), "utf8");
    expect(log).toContain("stuck prompt");
    expect(log).toContain("guppy is shutting down: this run was stopped");
    const inbox = readFileSync(join(home, "inbox.jsonl"), "utf8");
    expect(inbox).toMatch(/"aborted"/);
  });

  it("an answer of 50 MB is cut at GUPPY_MAX_ANSWER_CHARS; the logs stay small", async () => {
    let written = 0;
    const piece = "y".repeat(10_000);
    const line = `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] })}\n\n`;
    let warm = true;
    const { home, s } = await setup((res, socket) => {
      if (warm) return hello(res);
      res.writeHead(200, { "content-type": "text/event-stream" });
      let closed = false;
      socket.on("close", () => {
        closed = true;
      });
      const pump = () => {
        while (written < 5_000 && !closed) {
          written++;
          if (!res.write(line)) return void res.once("drain", pump);
        }
        res.end("data: [DONE]\n\n");
      };
      pump();
    });
    const id = "http:api:flood";
    await warmUp(s, id);
    warm = false;
    const events = await s.api(`/v1/threads/${id}/events`);
    const finals = readSse(events, (event) => event === "final");
    await s.api(`/v1/threads/${id}/messages`, {
      method: "POST",
      body: JSON.stringify({ text: "say a lot" }),
    });
    const all = await finals;
    const final = all.find((e) => e.event === "final")?.data;
    expect(final).toMatchObject({ stop_reason: "error" });
    expect(String(final?.error)).toContain("GUPPY_MAX_ANSWER_CHARS");
    expect(written).toBeLessThan(1_000);
    const dir = join(home, "http", "api", "flood");
    const logSize = statSync(join(dir, "log.jsonl")).size;
    expect(logSize).toBeGreaterThan(200_000);
    expect(logSize).toBeLessThan(1_000_000);
    const gatewayLog = join(home, "logs", "gateway.log");
    if (existsSync(gatewayLog)) expect(statSync(gatewayLog).size).toBeLessThan(1_000_000);
  });
});
