import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { RunnerEvent, SendResult } from "@guppy/core";
import { createFileThreadLog } from "@guppy/core/state";
import { createAdaptorServer } from "@hono/node-server";
import type { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import { writeWhenReady } from "../../../src/channels/http/chat-completions.js";
import { createHttpApp } from "../../../src/channels/http/create-http-app.js";
import { createEventCalls } from "../../../src/channels/http/event-calls.js";
import type {
  HttpBackend,
  HttpMessage,
  PromptReply,
} from "../../../src/channels/http/http-backend.js";

const TOKEN = "t0ken";

/**
 * A backend whose prompts wait until the test ends their run: `reply(threadId)` is the prompt's
 * reply (its events and notice), `result` what `send` answers.
 */
function scriptedBackend(result: () => Promise<SendResult>) {
  const replies = new Map<string, PromptReply>();
  const backend: HttpBackend = {
    command: async () => ({ status: "duplicate" }),
    gatewayStatus: async () => undefined,
    usageReport: async () => undefined,
    ...createEventCalls(undefined),
    access: async () => undefined,
    async send(threadId: string, message: HttpMessage) {
      if (message.type === "prompt" && message.reply) replies.set(threadId, message.reply);
      return result();
    },
    thread: async (threadId) => ({ status: "known", threadId }),
    threadsInMemory: async () => ({ threads: [] }),
    threadIdsOnDisk: async () => [],
    statuses: async () => [],
    log: createFileThreadLog("/nonexistent"),
  };
  return { backend, reply: (threadId: string) => replies.get(threadId) };
}

const queued = async (): Promise<SendResult> => ({
  status: "queued",
  inboxId: "in-1",
  position: 0,
});
const usage = (input: number, output: number): RunnerEvent => ({
  type: "usage",
  usage: {
    input,
    output,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: input + output,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  },
  totals: { input, output, cacheRead: 0, cacheWrite: 0, cost: 0, requests: 1 },
});
const runEnd = (
  text: string,
  stopReason: "stop" | "error" | "aborted",
  errorMessage?: string,
): RunnerEvent =>
  ({ type: "run_end", text, stopReason, ...(errorMessage ? { errorMessage } : {}) }) as RunnerEvent;

/** A real node server over the app (127.0.0.1, stopped after the test); `settled` counts fetches done. */
const servers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of servers.splice(0)) await stop();
});
async function serveApp(app: Hono) {
  let settled = 0;
  const server = createAdaptorServer({
    fetch: async (request, env) => {
      try {
        return await app.fetch(request, env);
      } finally {
        settled++;
      }
    },
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  servers.push(async () => {
    // A request the test left waiting (when it failed) must not hold the close up.
    (server as Server).closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, settled: () => settled };
}

/** POST /v1/chat/completions, through the node server or through app.request (no node bindings). */
type Transport = "node server" | "app.request";
async function ask(app: Hono, transport: Transport, body: unknown, thread = "t1") {
  const init = {
    method: "POST",
    headers: {
      authorization: `Bearer ${TOKEN}`,
      "content-type": "application/json",
      "x-guppy-thread": thread,
    },
    body: JSON.stringify(body),
  };
  if (transport === "app.request") return app.request("/v1/chat/completions", init);
  const { url } = await serveApp(app);
  return fetch(`${url}/v1/chat/completions`, init);
}

const appOver = (backend: HttpBackend) =>
  createHttpApp({ backend, token: TOKEN, tokenHint: "test", modelName: "guppy-model" });
const hello = { model: "m", messages: [{ role: "user", content: "hello" }] };
/** Lets the request reach the backend. */
const until = async (check: () => unknown) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(check()).toBeTruthy();
};

describe.each<Transport>(["node server", "app.request"])(
  "chat completions, plain (%s)",
  (transport) => {
    it("answers with the run's text and usage once the run ends", async () => {
      const s = scriptedBackend(queued);
      const pending = ask(appOver(s.backend), transport, hello);
      await until(() => s.reply("http:api:t1"));
      const reply = s.reply("http:api:t1") as PromptReply;
      expect(reply.events).toBe("end");
      reply.onEvent(usage(10, 3));
      reply.onEvent(runEnd("hi there", "stop"));
      const res = await pending;
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^application\/json/);
      expect(res.headers.get("x-guppy-thread-id")).toBe("http:api:t1");
      expect(res.headers.get("x-guppy-message-id")).toBe("in-1");
      expect(await res.json()).toMatchObject({
        id: "chatcmpl-in-1",
        object: "chat.completion",
        model: "m",
        choices: [
          { index: 0, message: { role: "assistant", content: "hi there" }, finish_reason: "stop" },
        ],
        usage: { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 },
        guppy: { thread_id: "http:api:t1", message_id: "in-1", stop_reason: "stop" },
      });
    });

    it("answers 502 for a failed run and 503 for a notice, naming the thread and message", async () => {
      const s = scriptedBackend(queued);
      const app = appOver(s.backend);
      const failing = ask(app, transport, hello, "bad");
      const noticed = ask(app, transport, hello, "note");
      await until(() => s.reply("http:api:bad") && s.reply("http:api:note"));
      s.reply("http:api:bad")?.onEvent(runEnd("", "error", "the model is down"));
      s.reply("http:api:note")?.notice("guppy is shutting down");
      const bad = await failing;
      expect(bad.status).toBe(502);
      expect(bad.headers.get("x-guppy-thread-id")).toBe("http:api:bad");
      expect(await bad.json()).toEqual({
        error: { message: "the model is down", type: "upstream_error" },
      });
      const note = await noticed;
      expect(note.status).toBe(503);
      expect(await note.json()).toEqual({
        error: { message: "guppy is shutting down", type: "unavailable" },
      });
    });

    it("answers 499 for an aborted run: its partial text is no complete answer", async () => {
      const s = scriptedBackend(queued);
      const pending = ask(appOver(s.backend), transport, hello, "stopped");
      await until(() => s.reply("http:api:stopped"));
      s.reply("http:api:stopped")?.onEvent(runEnd("half an ans", "aborted"));
      const res = await pending;
      expect(res.status).toBe(499);
      expect(res.headers.get("x-guppy-thread-id")).toBe("http:api:stopped");
      expect(await res.json()).toEqual({
        error: {
          message:
            "The run was aborted before it finished (POST /v1/threads/http:api:stopped/abort, /stop, or guppy shutting down).",
          type: "aborted",
        },
      });
    });

    it("answers 429 when the thread is busy, 503 when refused, 500 when the backend fails", async () => {
      const busy = await ask(
        appOver(scriptedBackend(async () => ({ status: "busy", queued: 5 })).backend),
        transport,
        hello,
      );
      expect(busy.status).toBe(429);
      expect(await busy.json()).toEqual({
        error: {
          message: "Thread http:api:t1 is busy (5 prompts queued); try again shortly.",
          type: "busy",
        },
      });
      const refused = await ask(
        appOver(scriptedBackend(async () => ({ status: "refused", reason: "stopping" })).backend),
        transport,
        hello,
      );
      expect(refused.status).toBe(503);
      expect(((await refused.json()) as { error: { message: string } }).error.message).toBe(
        "The prompt was not accepted: stopping.",
      );
      const broken = await ask(
        appOver(
          scriptedBackend(async () => {
            throw new Error("the main thread is gone");
          }).backend,
        ),
        transport,
        hello,
      );
      expect(broken.status).toBe(500);
      expect(await broken.json()).toEqual({
        error: { message: "Internal error: the main thread is gone", type: "internal_error" },
      });
    });
  },
);

describe("chat completions on the node server", () => {
  it("returns from Hono at once and writes the plain answer when the run ends", async () => {
    const s = scriptedBackend(queued);
    const served = await serveApp(appOver(s.backend));
    const pending = fetch(`${served.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify(hello),
    });
    await until(() => s.reply("http:api:default"));
    // The run is still going, and Hono's part of the request is over already.
    await until(() => served.settled() === 1);
    s.reply("http:api:default")?.onEvent(runEnd("late answer", "stop"));
    const res = await pending;
    expect(res.status).toBe(200);
    expect(
      ((await res.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]
        ?.message.content,
    ).toBe("late answer");
  });
});

/** The data lines of an SSE body, parsed (`[DONE]` as the string). */
const sseData = (text: string) =>
  text
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => (line === "data: [DONE]" ? "[DONE]" : JSON.parse(line.slice(6))));

describe("chat completions, streamed", () => {
  it("streams the answer as it comes: its first delta arrives before the run ends", async () => {
    const s = scriptedBackend(queued);
    const pending = ask(appOver(s.backend), "node server", { ...hello, stream: true });
    await until(() => s.reply("http:api:t1"));
    const reply = s.reply("http:api:t1") as PromptReply;
    reply.onEvent({ type: "text_delta", delta: "Hel" });
    const reader = ((await pending).body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let body = "";
    while (!body.includes('"content":"Hel"')) {
      const { value, done } = await reader.read();
      expect(done).toBe(false);
      body += decoder.decode(value, { stream: true });
    }
    reply.onEvent({ type: "text_delta", delta: "lo" });
    reply.onEvent(runEnd("Hello", "stop"));
    for (let r = await reader.read(); !r.done; r = await reader.read())
      body += decoder.decode(r.value);
    const deltas = sseData(body)
      .slice(1)
      .map((d) => (d === "[DONE]" ? d : d.choices[0]));
    expect(deltas).toEqual([
      { index: 0, delta: { content: "Hel" }, finish_reason: null },
      { index: 0, delta: { content: "lo" }, finish_reason: null },
      { index: 0, delta: {}, finish_reason: "stop" },
      "[DONE]",
    ]);
  });

  it("gives the text of every turn, as a plain answer of the same run does", async () => {
    const s = scriptedBackend(queued);
    const pending = ask(appOver(s.backend), "node server", { ...hello, stream: true });
    await until(() => s.reply("http:api:t1"));
    const reply = s.reply("http:api:t1") as PromptReply;
    for (const event of [
      { type: "text_delta", delta: "Let me check. " },
      { type: "tool_call", toolCallId: "1", name: "bash", args: {} },
      { type: "tool_result", toolCallId: "1", name: "bash", isError: false, text: "ok" },
      { type: "text_delta", delta: "after tool" },
      runEnd("after tool", "stop"),
    ] as RunnerEvent[])
      reply.onEvent(event);
    const content = sseData(await (await pending).text())
      .map((d) => (d === "[DONE]" ? "" : (d.choices[0]?.delta.content ?? "")))
      .join("");
    expect(content).toBe("Let me check. \n\nafter tool");
  });

  it.each([
    ["error", "the model is down", { message: "the model is down", type: "upstream_error" }],
    [
      "aborted",
      undefined,
      {
        message:
          "The run was aborted before it finished (POST /v1/threads/http:api:t1/abort, /stop, or guppy shutting down).",
        type: "aborted",
      },
    ],
  ] as const)(
    "ends a run that stopped with %s with an error object and [DONE], no finish_reason",
    async (stopReason, errorMessage, error) => {
      const s = scriptedBackend(queued);
      const pending = ask(appOver(s.backend), "node server", { ...hello, stream: true });
      await until(() => s.reply("http:api:t1"));
      const reply = s.reply("http:api:t1") as PromptReply;
      reply.onEvent({ type: "text_delta", delta: "half" });
      reply.onEvent(runEnd("half", stopReason, errorMessage));
      const data = sseData(await (await pending).text());
      expect(data.slice(1).map((d) => (d === "[DONE]" ? d : (d.choices?.[0] ?? d)))).toEqual([
        { index: 0, delta: { content: "half" }, finish_reason: null },
        { error },
        "[DONE]",
      ]);
    },
  );
});

describe("chat completions for any user and thread name", () => {
  it.each([
    ["用户", "http:%E7%94%A8%E6%88%B7"],
    ["Дмитрий", "http:%D0%94%D0%BC%D0%B8%D1%82%D1%80%D0%B8%D0%B9"],
    ["Zoë 🐟", "http:Zo%C3%AB%20%F0%9F%90%9F"],
  ])(
    "answers the user %j plain and streamed, its thread id URL-encoded in the header",
    async (user, encoded) => {
      const s = scriptedBackend(queued);
      const app = appOver(s.backend);
      const plain = ask(app, "node server", { ...hello, user }, "t");
      const streamed = ask(app, "node server", { ...hello, user, stream: true }, "s");
      const [plainId, streamId] = [`http:${user}:t`, `http:${user}:s`];
      await until(() => s.reply(plainId) && s.reply(streamId));
      s.reply(plainId)?.onEvent(runEnd("ok", "stop"));
      s.reply(streamId)?.onEvent({ type: "text_delta", delta: "ok" });
      s.reply(streamId)?.onEvent(runEnd("ok", "stop"));

      const p = await plain;
      expect(p.status).toBe(200);
      expect(p.headers.get("x-guppy-thread-id")).toBe(`${encoded}:t`);
      expect(decodeURIComponent(p.headers.get("x-guppy-thread-id") ?? "")).toBe(plainId);
      expect(await p.json()).toMatchObject({
        choices: [{ message: { content: "ok" } }],
        guppy: { thread_id: plainId },
      });
      const st = await streamed;
      expect(st.status).toBe(200);
      expect(st.headers.get("x-guppy-thread-id")).toBe(`${encoded}:s`);
      expect(await st.text()).toMatch(/"content":"ok"[\s\S]*data: \[DONE\]\n\n$/);
    },
  );

  it("reads X-Guppy-Thread as UTF-8 and refuses bytes that are not, before any prompt is sent", async () => {
    const s = scriptedBackend(queued);
    const app = appOver(s.backend);
    // What curl sends for -H 'X-Guppy-Thread: заметки': the UTF-8 bytes, one character each here.
    const utf8 = Buffer.from("заметки").toString("latin1");
    const pending = ask(app, "node server", hello, utf8);
    await until(() => s.reply("http:api:заметки"));
    s.reply("http:api:заметки")?.onEvent(runEnd("ok", "stop"));
    expect((await pending).headers.get("x-guppy-thread-id")).toBe(
      `http:api:${encodeURIComponent("заметки")}`,
    );

    const latin1 = await ask(app, "node server", hello, "Zo\u00eb");
    expect(latin1.status).toBe(400);
    expect(await latin1.json()).toEqual({
      error: {
        message:
          "The X-Guppy-Thread header is not UTF-8 text: send the thread name as ASCII or as its UTF-8 bytes.",
        type: "invalid_request_error",
      },
    });
    expect(s.reply("http:api:Zoë")).toBeUndefined();
    expect(s.reply("http:api:Zo\u00eb")).toBeUndefined();
  });

  it("gives every (user, thread) pair its own thread: a : or % in the user is percent-encoded", async () => {
    const s = scriptedBackend(queued);
    const app = appOver(s.backend);
    const pairs: Array<[string, string, string]> = [
      ["alice:secret", "default", "http:alice%3Asecret:default"],
      ["alice", "secret:default", "http:alice:secret:default"],
      [":", "default", "http:%3A:default"],
      ["50%3A", "x", "http:50%253A:x"],
      ["50:", "x", "http:50%3A:x"],
    ];
    const answers = pairs.map(([user, thread]) =>
      ask(app, "node server", { ...hello, user }, thread),
    );
    await until(() => pairs.every(([, , id]) => s.reply(id)));
    for (const [, , id] of pairs) s.reply(id)?.onEvent(runEnd(`in ${id}`, "stop"));
    for (const [i, answer] of answers.entries()) {
      const res = await answer;
      const id = pairs[i]?.[2] as string;
      expect(await res.json()).toMatchObject({
        choices: [{ message: { content: `in ${id}` } }],
        guppy: { thread_id: id },
      });
      // The header goes into a path as it is, and reaches the same thread.
      const header = res.headers.get("x-guppy-thread-id") as string;
      const log = await app.request(`/v1/threads/${header}/messages`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(((await log.json()) as { thread_id: string }).thread_id).toBe(id);
    }
  });

  it("logs an answer it cannot write and answers 500 in its place", async () => {
    const logged: string[] = [];
    const server = createServer((_req, res) =>
      writeWhenReady(
        res,
        Promise.resolve({ status: 200, body: { ok: true }, headers: { "x-bad": "用户" } }),
        (message) => logged.push(message),
      ),
    );
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    servers.push(() => new Promise((r) => server.close(() => r())));
    const { port } = server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}/`);
    expect(res.status).toBe(500);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(
      /^Internal error: the answer could not be written \(Invalid character in header content \["x-bad"\]\)$/,
    );
    expect(logged).toEqual([
      expect.stringMatching(/^The HTTP API could not write an answer: Invalid character in header/),
    ]);
  });
});
