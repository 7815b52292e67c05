import { existsSync } from "node:fs";
import { join } from "node:path";
import type { ChatCompletionRequest, FixtureResponse } from "@copilotkit/aimock";
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  uniqueMarker,
  waitNoneWith,
  waitRunning,
} from "../../../core/test/helpers/process-state.js";
import { tempHome } from "../helpers/run-cli.js";
import {
  type AsyncMockLlm,
  contentText,
  type ServeProcess,
  startAsyncMockLlm,
  startServe,
  stopServes,
  threadMessages,
  waitFor,
} from "./serve-harness.js";

/**
 * Issue 37 item 8, through `guppy serve` against aimock: chat UIs list the models first, a
 * streamed answer keeps its connection alive while a tool runs, and a client that goes stops
 * its run (unless it says X-Guppy-Keep-Running: true).
 */

/** "run-bash CMD" asks for bash; a tool result is answered with its first line; else an echo. */
function script(request: ChatCompletionRequest): FixtureResponse {
  const last = request.messages[request.messages.length - 1];
  if (last?.role === "tool") {
    return { content: `Tool said: ${contentText(last.content).split("\n")[0]}` };
  }
  const text = contentText(last?.content);
  const bash = /run-bash (.+)$/.exec(text);
  if (bash?.[1]) {
    return { toolCalls: [{ name: "bash", arguments: JSON.stringify({ command: bash[1] }) }] };
  }
  return { content: `You said: ${text}` };
}

const STOP_NOTICE =
  "Stopped: the client of this streamed chat completion disconnected before the answer was complete.";

describe("OpenAI-compatible clients (guppy serve, aimock behind it)", () => {
  let llm: AsyncMockLlm;
  const homes: Array<ReturnType<typeof tempHome>> = [];
  const running: ServeProcess[] = [];
  /** Tool commands here only sleep and echo: the host sandbox, whose processes are found by pid. */
  const serve = async () => {
    const h = tempHome();
    homes.push(h);
    const s = await startServe(h.home, { ...llm.env(), GUPPY_SANDBOX: "host" });
    running.push(s);
    return { s, home: h.home };
  };
  const client = (s: ServeProcess) =>
    new OpenAI({ baseURL: `${s.url}/v1`, apiKey: s.token, maxRetries: 0, timeout: 20_000 });
  /** A streamed completion as a raw fetch: the openai client hides SSE comments. */
  const streamed = (
    s: ServeProcess,
    thread: string,
    text: string,
    init: { signal?: AbortSignal; headers?: Record<string, string> } = {},
  ) =>
    s.api("/v1/chat/completions", {
      method: "POST",
      headers: { "X-Guppy-Thread": thread, ...init.headers },
      body: JSON.stringify({
        model: "m",
        stream: true,
        messages: [{ role: "user", content: text }],
      }),
      ...(init.signal ? { signal: init.signal } : {}),
    });
  const threadState = async (s: ServeProcess, id: string) => {
    const r = await s.api(`/v1/threads/${id}/status`);
    return ((await r.json()) as { state: string }).state;
  };
  beforeAll(async () => {
    llm = await startAsyncMockLlm(script);
  });
  afterEach(async () => {
    await stopServes(running);
  });
  afterAll(async () => {
    await llm.stop();
    for (const h of homes) h.cleanup();
  });

  it("lists the configured model to the openai client, and answers a completion with its id", async () => {
    const { s } = await serve();
    const openai = client(s);
    const models = [];
    for await (const model of openai.models.list()) models.push(model);
    expect(models).toEqual([
      { id: "openai/mock-gpt", object: "model", created: expect.any(Number), owned_by: "guppy" },
    ]);
    const listed = models[0] as (typeof models)[number];
    expect(Math.abs(listed.created - Date.now() / 1000)).toBeLessThan(600);
    expect(await openai.models.retrieve(listed.id)).toEqual(listed);
    const unknown = await openai.models.retrieve("gpt-4o").catch((error: unknown) => error);
    expect((unknown as InstanceType<typeof OpenAI.APIError>).status).toBe(404);

    const answer = await openai.chat.completions.create({
      model: listed.id,
      messages: [{ role: "user", content: "hello from a chat UI" }],
    });
    expect(answer.model).toBe(listed.id);
    expect(answer.choices[0]?.message.content).toBe("You said: hello from a chat UI");

    // Authenticated like every route but /health.
    const anonymous = await fetch(`${s.url}/v1/models`);
    expect(anonymous.status).toBe(401);
  });

  it("sends an SSE keep-alive comment while a 20 s tool runs, then the answer", async () => {
    const { s } = await serve();
    const marker = uniqueMarker();
    const text = `run-bash sleep 20.${marker}; echo slept-${marker}`;
    const response = await streamed(s, "slow-tool", text);
    expect(response.status).toBe(200);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let body = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      body += decoder.decode(value, { stream: true });
    }
    const comment = body.indexOf(": keep-alive\n\n");
    const answer = body.indexOf("Tool said: ");
    const content = body
      .split("\n")
      .filter((line) => line.startsWith("data: {"))
      .map((line) => JSON.parse(line.slice(6)).choices[0]?.delta.content ?? "")
      .join("");
    expect(content).toBe(`Tool said: slept-${marker}`);
    // The comment came while the tool ran: after the opening chunk, before the tool's answer.
    expect(comment).toBeGreaterThan(body.indexOf('"role":"assistant"'));
    expect(comment).toBeLessThan(answer);
    expect(body.trimEnd().endsWith("data: [DONE]")).toBe(true);
  }, 60_000);

  it("stops the run of a streaming client that disconnects: the tool dies, the thread is idle, its log says so", async () => {
    const { s, home } = await serve();
    const id = "http:api:stop-me";
    const marker = uniqueMarker();
    const file = join(home, `never-${marker}`);
    const text = `run-bash sleep 30.${marker} && touch ${file}`;
    const controller = new AbortController();
    const response = await streamed(s, "stop-me", text, { signal: controller.signal });
    expect(response.status).toBe(200);
    await waitRunning([`sleep 30.${marker}`], 20_000);
    expect(await threadState(s, id)).toBe("running");
    controller.abort(); // the UI's Stop button
    await response.body?.cancel().catch(() => {});

    expect(await waitNoneWith(`30.${marker}`, 10_000)).toBe(true);
    await waitFor(
      async () => ((await threadState(s, id)) === "idle" ? true : undefined),
      10_000,
      "the thread to go idle",
    );
    const log = await waitFor(async () => {
      const messages = await threadMessages(s, id);
      return messages.some((m) => m.is_bot) ? messages : undefined;
    });
    expect(log.map((m) => [m.is_bot, m.text])).toEqual([
      [false, text],
      [true, STOP_NOTICE],
    ]);
    expect(existsSync(file)).toBe(false);
  }, 60_000);

  it("stops a disconnected client's queued prompt as it starts, not the run ahead of it", async () => {
    const { s, home } = await serve();
    const id = "http:api:queue";
    const marker = uniqueMarker();
    const file = join(home, `never-${marker}`);
    const first = `run-bash sleep 4.${marker}; echo first-${marker}`;
    const second = `run-bash touch ${file}`;
    const ahead = client(s).chat.completions.create(
      { model: "m", messages: [{ role: "user", content: first }] },
      { headers: { "X-Guppy-Thread": "queue" } },
    );
    await waitRunning([`sleep 4.${marker}`], 20_000);
    const controller = new AbortController();
    const behind = await streamed(s, "queue", second, { signal: controller.signal });
    expect(behind.status).toBe(200);
    controller.abort(); // while it waits behind the first run
    await behind.body?.cancel().catch(() => {});

    const answer = await ahead;
    expect(answer.choices[0]?.message.content).toBe(`Tool said: first-${marker}`);
    const log = await waitFor(async () => {
      const messages = await threadMessages(s, id);
      return messages.length === 4 ? messages : undefined;
    });
    expect(log.map((m) => m.text)).toEqual([
      first,
      `Tool said: first-${marker}`,
      second,
      STOP_NOTICE,
    ]);
    // Its run was stopped at its start: its tool never ran.
    expect(existsSync(file)).toBe(false);
  }, 60_000);

  it("keeps the run going after the client disconnects when it sent X-Guppy-Keep-Running: true", async () => {
    const { s } = await serve();
    const id = "http:api:keep";
    const marker = uniqueMarker();
    const text = `run-bash sleep 3.${marker}; echo finished-${marker}`;
    const controller = new AbortController();
    const response = await streamed(s, "keep", text, {
      signal: controller.signal,
      headers: { "X-Guppy-Keep-Running": "true" },
    });
    expect(response.status).toBe(200);
    await waitRunning([`sleep 3.${marker}`], 20_000);
    controller.abort();
    await response.body?.cancel().catch(() => {});

    const log = await waitFor(
      async () => {
        const messages = await threadMessages(s, id);
        return messages.some((m) => m.is_bot) ? messages : undefined;
      },
      20_000,
      "the answer in the log",
    );
    expect(log.map((m) => [m.is_bot, m.text])).toEqual([
      [false, text],
      [true, `Tool said: finished-${marker}`],
    ]);
    expect(await threadState(s, id)).toBe("idle");
  }, 60_000);
});
