import { spawn } from "node:child_process";
import {
  closeSync,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import type { ChatCompletionRequest, FixtureResponse } from "@copilotkit/aimock";
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  pidsWith,
  uniqueMarker,
  waitNoneWith,
  waitRunning,
} from "../../../core/test/helpers/process-state.js";
import { freePort } from "../helpers/free-port.js";
import { cleanEnv, guppyBin, runCli, tempHome } from "../helpers/run-cli.js";
import {
  type AsyncMockLlm,
  contentText,
  readSse,
  type ServeProcess,
  startAsyncMockLlm,
  startServe,
  stopServes,
  threadMessages,
  waitFor,
} from "./serve-harness.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The scripted model: a tool result is answered with its first line; "run-bash CMD" asks for
 * bash ("say-then-bash CMD" with a few words before the call); "slow-once N" answers after N ms
 * the first time; anything else is echoed with the number of user messages the request carried
 * (so a thread's history shows in its answers). A tool result of a prompt that says "then-fail"
 * is answered with a 500.
 */
const slowSeen = new Set<string>();

async function script(request: ChatCompletionRequest): Promise<FixtureResponse> {
  const last = request.messages[request.messages.length - 1];
  if (last?.role === "tool") {
    const asked = request.messages.findLast((m) => m.role === "user");
    if (contentText(asked?.content).includes("then-fail")) {
      return { error: { message: "the model broke", type: "server_error" }, status: 500 };
    }
    return { content: `Tool said: ${contentText(last.content).split("\n")[0]}` };
  }
  const text = contentText(last?.content);
  const bash = /(say-then-|run-)bash (.+)$/.exec(text);
  if (bash?.[2]) {
    const toolCalls = [{ name: "bash", arguments: JSON.stringify({ command: bash[2] }) }];
    return bash[1] === "say-then-" ? { content: "Let me check. ", toolCalls } : { toolCalls };
  }
  const slow = /slow-once (\d+)/.exec(text);
  if (slow && !slowSeen.has(text)) {
    slowSeen.add(text);
    await sleep(Number(slow[1]));
  }
  const users = request.messages.filter((m) => m.role === "user").length;
  return { content: `You said: ${text} (#${users})` };
}

describe("guppy serve (HTTP API, aimock behind it)", () => {
  let llm: AsyncMockLlm;
  const homes: Array<ReturnType<typeof tempHome>> = [];
  const running: ServeProcess[] = [];
  const home = () => {
    const h = tempHome();
    homes.push(h);
    return h.home;
  };
  const serve = async (dir: string, extra: Record<string, string> = {}) => {
    const s = await startServe(dir, { ...llm.env(), ...extra });
    running.push(s);
    return s;
  };
  /**
   * For tests whose tool commands write outside the workspace: the host sandbox (bubblewrap
   * would hide those files). Their processes are found by a word in their arguments (pidsWith).
   */
  const onHost = { GUPPY_SANDBOX: "host" };
  const client = (s: ServeProcess) =>
    new OpenAI({ baseURL: `${s.url}/v1`, apiKey: s.token, maxRetries: 0, timeout: 20_000 });

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

  it("answers the openai client with and without streaming, routing by user and X-Guppy-Thread", async () => {
    const dir = home();
    const s = await serve(dir);
    expect(statSync(join(dir, "api-token")).mode & 0o777).toBe(0o600);
    expect(s.stdout()).toMatch(/token generated and saved to .*api-token.*cat /);
    const openai = client(s);

    const plain = await openai.chat.completions.create({
      model: "whatever",
      messages: [
        { role: "system", content: "ignored: the thread keeps its own history" },
        { role: "user", content: "old turn, not new input" },
        { role: "assistant", content: "old answer" },
        { role: "user", content: "hello gateway" },
      ],
    });
    expect(plain.choices[0]?.message.content).toBe("You said: hello gateway (#1)");
    expect(plain.choices[0]?.finish_reason).toBe("stop");
    expect(plain.usage?.total_tokens).toBeGreaterThanOrEqual(0);

    const stream = await openai.chat.completions.create(
      {
        model: "m",
        stream: true,
        user: "alice",
        messages: [{ role: "user", content: "stream this please" }],
      },
      { headers: { "X-Guppy-Thread": "notes" } },
    );
    const deltas: string[] = [];
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (choice?.delta.content) deltas.push(choice.delta.content);
      if (choice?.finish_reason) finish = choice.finish_reason;
    }
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe("You said: stream this please (#1)");
    expect(finish).toBe("stop");

    // The default thread keeps its history: the second prompt there is its second user message.
    const again = await openai.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "second" }],
    });
    expect(again.choices[0]?.message.content).toBe("You said: second (#2)");

    const threads = (await (await s.api("/v1/threads")).json()) as {
      threads: Array<{ id: string; state: string; messages: number; tokens: { context: number } }>;
    };
    expect(threads.threads.map((t) => t.id).sort()).toEqual([
      "http:alice:notes",
      "http:api:default",
    ]);
    expect(threads.threads.find((t) => t.id === "http:api:default")).toMatchObject({
      state: "idle",
      messages: 4,
    });
    if (process.platform === "linux") {
      // The HTTP thread gives way to the agents' thread on busy cores: it alone is 5 nicer, none
      // of the threads started since (the file-system pool above all) took its priority.
      const pid = s.child.pid as number;
      const nice = (tid: string) =>
        Number(
          readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8").split(") ")[1]?.split(" ")[16],
        );
      const main = nice(String(pid));
      const nicer = readdirSync(`/proc/${pid}/task`).filter((t) => nice(t) === main + 5);
      expect(nicer).toHaveLength(1);
    }
  });

  it("answers the same text streamed or not when the model speaks before a tool call", async () => {
    const openai = client(await serve(home()));
    const ask = { headers: { "X-Guppy-Thread": "mixed" } };
    const plain = await openai.chat.completions.create(
      { model: "m", messages: [{ role: "user", content: "say-then-bash echo one" }] },
      ask,
    );
    const stream = await openai.chat.completions.create(
      { model: "m", stream: true, messages: [{ role: "user", content: "say-then-bash echo two" }] },
      ask,
    );
    let streamed = "";
    for await (const chunk of stream) streamed += chunk.choices[0]?.delta.content ?? "";
    expect(plain.choices[0]?.message.content).toBe("Let me check. \n\nTool said: one");
    expect(streamed).toBe("Let me check. \n\nTool said: two");
  });

  it("guards every route but /health with the bearer token and answers bad input with JSON 4xx", async () => {
    const dir = home();
    const s = await serve(dir);
    expect(await (await fetch(`${s.url}/health`)).json()).toEqual({ status: "ok" });
    const noAuth = await fetch(`${s.url}/v1/threads`);
    expect(noAuth.status).toBe(401);
    // A client on this machine is told where the token is kept.
    expect(((await noAuth.json()) as { error: { message: string } }).error.message).toContain(
      join(dir, "api-token"),
    );
    const wrong = await fetch(`${s.url}/v1/threads`, { headers: { authorization: "Bearer nope" } });
    expect(wrong.status).toBe(401);

    const bad = await s.api("/v1/chat/completions", { method: "POST", body: "{not json" });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toMatch(
      /not valid JSON/,
    );
    const noUser = await s.api("/v1/chat/completions", {
      method: "POST",
      body: JSON.stringify({ messages: [{ role: "system", content: "x" }] }),
    });
    expect(noUser.status).toBe(400);
    for (const path of ["/v1/threads/http:api:nope/events", "/v1/threads/http:api:nope/messages"]) {
      const r = await s.api(path);
      expect(r.status).toBe(404);
      expect(((await r.json()) as { error: { message: string } }).error.message).toMatch(
        /Unknown thread/,
      );
    }
    const abortUnknown = await s.api("/v1/threads/http:api:nope/abort", { method: "POST" });
    expect(abortUnknown.status).toBe(404);
    const badId = await s.api(`/v1/threads/${encodeURIComponent("NOT VALID")}/messages`, {
      method: "POST",
      body: JSON.stringify({ text: "hi" }),
    });
    expect(badId.status).toBe(400);
    // An id whose parts would land on guppy's own files: refused, and nothing made there.
    for (const id of [
      "access:telegram:approved.json",
      "logs:x:y",
      "http:MEMORY.md:t",
      "http:c:skills",
    ]) {
      const reserved = await s.api(`/v1/threads/${encodeURIComponent(id)}/messages`, {
        method: "POST",
        body: JSON.stringify({ text: "hi" }),
      });
      expect(reserved.status).toBe(400);
      expect(((await reserved.json()) as { error: { message: string } }).error.message).toMatch(
        /name guppy uses/,
      );
    }
    expect(existsSync(join(dir, "access"))).toBe(false);
    expect(existsSync(join(dir, "logs", "x"))).toBe(false);
    // A thread id without its thread part is that channel's thread "default": one thread, however
    // it is spelt, and the API answers with the spelling it keeps.
    const short = await s.api("/v1/threads/http:short/messages", {
      method: "POST",
      body: JSON.stringify({ text: "spelt short" }),
    });
    expect(short.status).toBe(202);
    expect(await short.json()).toMatchObject({ thread_id: "http:short:default" });
    // Logged when its run starts, which the 202 does not wait for.
    const shortLog = await waitFor(async () => {
      const msgs = await threadMessages(s, "http:short:default");
      return msgs.length > 0 ? msgs : undefined;
    });
    expect(shortLog[0]).toMatchObject({ text: "spelt short" });
    // A message_id the thread has accepted already (a client sending it again) is refused.
    const post = () =>
      s.api("/v1/threads/http:api:ids/messages", {
        method: "POST",
        body: JSON.stringify({ text: "only once", message_id: "client-1" }),
      });
    expect((await post()).status).toBe(202);
    const again = await post();
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: { type: string } }).error.type).toBe("duplicate");
    // A body without a Content-Length (chunked) is read up to the limit, then refused.
    const chunked = (text: string) =>
      s.api("/v1/threads/http:api:chunked/messages", {
        method: "POST",
        body: new ReadableStream({
          start(controller) {
            controller.enqueue(new TextEncoder().encode(text));
            controller.close();
          },
        }),
        duplex: "half",
      } as RequestInit);
    expect((await chunked(JSON.stringify({ text: "small and chunked" }))).status).toBe(202);
    const bigChunked = await chunked(JSON.stringify({ text: "y".repeat(1024 * 1024 + 10) }));
    expect(bigChunked.status).toBe(413);
    expect(((await bigChunked.json()) as { error: { type: string } }).error.type).toBe(
      "payload_too_large",
    );
    // Last: the server answers 413 without reading the body and closes that connection.
    const huge = await s.api("/v1/threads/http:api:big/messages", {
      method: "POST",
      body: JSON.stringify({ text: "x".repeat(1024 * 1024 + 10) }),
    });
    expect(huge.status).toBe(413);
    expect(((await huge.json()) as { error: { type: string } }).error.type).toBe(
      "payload_too_large",
    );
  });

  it("refuses to listen on a non-loopback host without a token, in one line", async () => {
    const dir = home();
    const r = await runCli(["serve"], {
      env: cleanEnv({
        ...llm.env(),
        GUPPY_HOME: dir,
        GUPPY_HTTP_HOST: "0.0.0.0",
        GUPPY_HTTP_PORT: "0",
      }),
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^guppy: GUPPY_HTTP_HOST is 0\.0\.0\.0.*set GUPPY_API_TOKEN/);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(existsSync(join(dir, "api-token"))).toBe(false);
  });

  it("refuses a token file it cannot use, in one line, and leaves the file as the user wrote it", async () => {
    const dir = home();
    writeFileSync(join(dir, "api-token"), "mysecret\n");
    const r = await runCli(["serve"], {
      env: cleanEnv({ ...llm.env(), GUPPY_HOME: dir, GUPPY_HTTP_PORT: "0" }),
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^guppy: .*api-token does not hold a usable API token: it is 8 characters long; an API token is at least 16 characters/,
    );
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(readFileSync(join(dir, "api-token"), "utf8")).toBe("mysecret\n");
  });

  it("answers 50 concurrent threads × 4 messages, each thread in order", async () => {
    const s = await serve(home(), { GUPPY_MAX_CONCURRENT: "8" });
    const openai = client(s);
    const threads = Array.from({ length: 50 }, (_, i) => `t${i}`);
    const answers = await Promise.all(
      threads.map(async (t) => {
        const out: string[] = [];
        for (let m = 1; m <= 4; m++) {
          const r = await openai.chat.completions.create(
            { model: "m", messages: [{ role: "user", content: `${t}-m${m}` }] },
            { headers: { "X-Guppy-Thread": t } },
          );
          out.push(r.choices[0]?.message.content ?? "");
        }
        return out;
      }),
    );
    threads.forEach((t, i) => {
      expect(answers[i]).toEqual([1, 2, 3, 4].map((m) => `You said: ${t}-m${m} (#${m})`));
    });
    // Queued through the thread API: four posts in a row are answered in the order they were sent.
    const ids = ["q1", "q2", "q3"].map((t) => `http:api:${t}`);
    for (const id of ids) {
      for (let m = 1; m <= 4; m++) {
        const r = await s.api(`/v1/threads/${id}/messages`, {
          method: "POST",
          body: JSON.stringify({ text: `${id} post ${m}` }),
        });
        expect(r.status).toBe(202);
        expect(((await r.json()) as { id: string }).id).toMatch(/^in-/);
      }
    }
    for (const id of ids) {
      const log = await waitFor(async () => {
        const msgs = await threadMessages(s, id);
        return msgs.filter((m) => m.is_bot).length === 4 ? msgs : undefined;
      });
      expect(log.map((m) => m.text)).toEqual(
        [1, 2, 3, 4].flatMap((m) => [`${id} post ${m}`, `You said: ${id} post ${m} (#${m})`]),
      );
    }
  }, 60_000);

  it("names a posted message so that its 202, its events and its log entry can be matched", async () => {
    const s = await serve(home());
    const id = "http:api:ids";
    await s.api(`/v1/threads/${id}/messages`, {
      method: "POST",
      body: JSON.stringify({ text: "warm up" }),
    });
    await waitFor(async () => ((await threadMessages(s, id)).length === 2 ? true : undefined));
    let subscribed = () => {};
    const ready = new Promise<void>((r) => {
      subscribed = r;
    });
    const seen = readSse(await s.api(`/v1/threads/${id}/events`), (e) => {
      if (e === "ready") subscribed();
      return e === "final";
    });
    await ready;
    const posted = (await (
      await s.api(`/v1/threads/${id}/messages`, {
        method: "POST",
        body: JSON.stringify({ text: "with my id", message_id: "client-7" }),
      })
    ).json()) as { id: string; log_id: string };
    expect(posted.id).toMatch(/^in-/);
    expect(posted.log_id).toBe("client-7");
    const events = await seen;
    for (const e of events.filter((e) => ["queued", "start", "final"].includes(e.event))) {
      expect(e.data.message_id).toBe(posted.id);
    }
    expect(events.map((e) => e.event)).toContain("start");
    const log = await threadMessages(s, id);
    expect(log.find((m) => m.text === "with my id")?.id).toBe(posted.log_id);
    // Without a message_id of the client's, the log entry has the prompt's own id.
    const plain = (await (
      await s.api(`/v1/threads/${id}/messages`, {
        method: "POST",
        body: JSON.stringify({ text: "without" }),
      })
    ).json()) as { id: string; log_id: string };
    expect(plain.log_id).toBe(plain.id);
    const entry = await waitFor(async () =>
      (await threadMessages(s, id)).find((m) => m.text === "without"),
    );
    expect(entry.id).toBe(plain.id);
  });

  it("aborts a run mid-tool (the bash process dies) and still runs the prompt queued behind it", async () => {
    const dir = home();
    const s = await serve(dir);
    const id = "http:api:abort";
    const marker = join(dir, "never-written");
    await s.api(`/v1/threads/${id}/messages`, {
      method: "POST",
      body: JSON.stringify({ text: "warm up" }),
    });
    await waitFor(async () => ((await threadMessages(s, id)).length === 2 ? true : undefined));
    const events = await s.api(`/v1/threads/${id}/events`);
    expect(events.headers.get("content-type")).toMatch(/text\/event-stream/);
    const seen = readSse(events, (event) => event === "final" && seenFinals++ === 1);
    let seenFinals = 0;
    await s.api(`/v1/threads/${id}/messages`, {
      method: "POST",
      body: JSON.stringify({ text: `run-bash sleep 20 && touch ${marker}` }),
    });
    await s.api(`/v1/threads/${id}/messages`, {
      method: "POST",
      body: JSON.stringify({ text: "after the abort" }),
    });
    await waitFor(async () => {
      const r = (await (await s.api("/v1/threads")).json()) as {
        threads: Array<{ id: string; state: string }>;
      };
      return r.threads.find((t) => t.id === id)?.state === "running" ? true : undefined;
    });
    await sleep(300); // the bash tool is running now
    const t0 = Date.now();
    const abortOnce = () =>
      s.api(`/v1/threads/${id}/abort`, {
        method: "POST",
        body: JSON.stringify({ message_id: "stop-1" }),
      });
    const abort = await abortOnce();
    expect(abort.status).toBe(200);
    const stream = await seen;
    expect(Date.now() - t0).toBeLessThan(5000);
    const kinds = stream.map((e) => e.event);
    expect(kinds).toContain("tool_call");
    const finals = stream.filter((e) => e.event === "final").map((e) => e.data);
    expect(finals[0]).toMatchObject({ stop_reason: "aborted" });
    expect(finals[1]).toMatchObject({
      stop_reason: "stop",
      text: "You said: after the abort (#3)",
    });
    expect(existsSync(marker)).toBe(false);
    const errorType = async (r: Response) =>
      [r.status, ((await r.json()) as { error: { type: string } }).error.type] as const;
    // Without a body, as before message_id was taken.
    const nothing = await s.api(`/v1/threads/${id}/abort`, { method: "POST" });
    expect(await errorType(nothing)).toEqual([409, "nothing_running"]);
    // The same message_id again (a client's retry) never stops a later run: refused as such.
    expect(await errorType(await abortOnce())).toEqual([409, "duplicate"]);
    const steerOnce = () =>
      s.api(`/v1/threads/${id}/steer`, {
        method: "POST",
        body: JSON.stringify({ text: "go left", message_id: "steer-1" }),
      });
    expect(await errorType(await steerOnce())).toEqual([409, "nothing_running"]);
    expect(await errorType(await steerOnce())).toEqual([409, "duplicate"]);
    const notJson = await s.api(`/v1/threads/${id}/abort`, { method: "POST", body: "stop!" });
    expect(notJson.status).toBe(400);
  });

  it("tells the openai client not to send again a prompt whose run failed after its tool ran", async () => {
    const dir = home();
    const s = await serve(dir, onHost);
    // The client's default retries: two more requests after a 5xx, each a new prompt.
    const openai = new OpenAI({ baseURL: `${s.url}/v1`, apiKey: s.token, timeout: 20_000 });
    const marker = join(dir, "runs.txt");
    const text = `run-bash echo ran >> ${marker} then-fail`;
    const failure = await openai.chat.completions
      .create(
        { model: "m", messages: [{ role: "user", content: text }] },
        { headers: { "X-Guppy-Thread": "fails" } },
      )
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect((failure as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect((failure as InstanceType<typeof OpenAI.APIError>).headers?.get("x-should-retry")).toBe(
      "false",
    );
    expect(readFileSync(marker, "utf8")).toBe("ran then-fail\n");
    const logged = await threadMessages(s, "http:api:fails");
    expect(logged.filter((m) => !m.is_bot).map((m) => m.text)).toEqual([text]);
  });

  it("gives the openai client an error it does not retry for an aborted answer, plain or streamed", async () => {
    const s = await serve(home());
    // The client's default retries: a 409 or a 5xx would send the aborted prompt again.
    const openai = new OpenAI({ baseURL: `${s.url}/v1`, apiKey: s.token, timeout: 20_000 });
    const asked = (text: string) =>
      llm.requests.filter((r) => contentText(r.messages.at(-1)?.content) === text).length;
    for (const stream of [false, true]) {
      const text = `slow-once 5000 abort me (stream: ${stream})`;
      const answer = (async () => {
        const options = { headers: { "X-Guppy-Thread": "stopped" } };
        const messages = [{ role: "user" as const, content: text }];
        if (!stream) return openai.chat.completions.create({ model: "m", messages }, options);
        const chunks = await openai.chat.completions.create(
          { model: "m", messages, stream },
          options,
        );
        for await (const _ of chunks);
      })().then(
        () => undefined,
        (error: unknown) => error,
      );
      await waitFor(() => (asked(text) === 1 ? true : undefined));
      expect((await s.api("/v1/threads/http:api:stopped/abort", { method: "POST" })).status).toBe(
        200,
      );
      const error = await answer;
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(stream ? undefined : 499);
      expect((error as Error).message).toMatch(/The run was aborted before it finished/);
      expect(asked(text)).toBe(1);
    }
  });

  it("after kill -9 mid-run, a restart re-runs the prompt that had no side effects and reports the one that had", async () => {
    const dir = home();
    const first = await serve(dir, onHost);
    const clean = "http:api:clean";
    const sideEffects = "http:api:effects";
    const sleeper = `20.${uniqueMarker()}`;
    await first.api(`/v1/threads/${clean}/messages`, {
      method: "POST",
      body: JSON.stringify({ text: "slow-once 8000 tell me" }),
    });
    await first.api(`/v1/threads/${sideEffects}/messages`, {
      method: "POST",
      body: JSON.stringify({
        text: `run-bash echo started > ${join(dir, "effect")}; sleep ${sleeper}`,
      }),
    });
    await waitFor(() => (existsSync(join(dir, "effect")) ? true : undefined));
    await waitRunning([`sleep ${sleeper}`]);
    first.child.kill("SIGKILL");
    await first.exited;
    expect(pidsWith(sleeper).length).toBeGreaterThan(0); // guppy could not kill its tool command

    const second = await serve(dir, onHost);
    // The next start did, before it reports the run as interrupted (not run again).
    expect(await waitNoneWith(sleeper)).toBe(true);
    expect(second.stdout()).toMatch(
      /Killed 1 tool command\(s\) left running by a guppy that was killed/,
    );
    const cleanLog = await waitFor(async () => {
      const msgs = await threadMessages(second, clean);
      return msgs.some((m) => m.is_bot) ? msgs : undefined;
    }, 15_000);
    expect(cleanLog.filter((m) => m.is_bot).map((m) => m.text)).toEqual([
      expect.stringMatching(/^You said: slow-once 8000 tell me/),
    ]);
    // The killed run had logged the prompt; running it again does not log it twice.
    expect(cleanLog.filter((m) => !m.is_bot).map((m) => m.text)).toEqual([
      "slow-once 8000 tell me",
    ]);
    const effectsLog = await threadMessages(second, sideEffects);
    const report = effectsLog.filter((m) => m.is_bot);
    expect(report).toHaveLength(1);
    expect(report[0]?.text).toMatch(
      /interrupted.*It had already run: bash .*echo started.*not run again/,
    );
    expect(second.stdout()).toMatch(/reporting in-\S+ as interrupted/);
    // Nothing is left to replay after a second restart.
    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
    const third = await serve(dir, onHost);
    await sleep(300);
    expect(third.stdout()).not.toMatch(/replaying|reporting/);
  }, 40_000);

  it("on a second SIGTERM exits at once and kills the running tool command's processes", async () => {
    const dir = home();
    const s = await serve(dir, { ...onHost, GUPPY_SHUTDOWN_GRACE_SECONDS: "30" });
    const marker = join(dir, "too-late");
    const sleeper = `4.${uniqueMarker()}`;
    await s.api("/v1/threads/http:api:twice/messages", {
      method: "POST",
      body: JSON.stringify({ text: `run-bash sleep ${sleeper} & wait; touch ${marker}` }),
    });
    await waitRunning([`sleep ${sleeper}`]);
    s.child.kill("SIGTERM");
    await waitFor(() => (s.stdout().includes("SIGTERM: shutting down") ? true : undefined));
    s.child.kill("SIGTERM");
    expect(await s.exited).toBe(130);
    // Killed before the exit, not when the command would have ended by itself (4 s).
    expect(await waitNoneWith(sleeper, 1500)).toBe(true);
    expect(s.stdout()).toMatch(/second signal: stopping now \(killed 1 running tool command/);
    await sleep(4500);
    expect(existsSync(marker)).toBe(false);
  }, 30_000);

  it("kills a tool command's process that ignores SIGTERM when the grace period ends", async () => {
    const dir = home();
    const s = await serve(dir, { ...onHost, GUPPY_SHUTDOWN_GRACE_SECONDS: "1" });
    const stubborn = `30.${uniqueMarker()}`;
    // On a connection of its own, closed after the answer: a kept-alive one would hold the
    // shutdown (closing the HTTP server) long enough for the abort's own SIGKILL timer to fire.
    const body = JSON.stringify({
      text: `run-bash (trap '' TERM; exec sleep ${stubborn} >/dev/null 2>&1) & sleep 31`,
    });
    await new Promise((resolve, reject) => {
      const post = request(`${s.url}/v1/threads/http:api:stubborn/messages`, {
        method: "POST",
        agent: false,
        headers: {
          authorization: `Bearer ${s.token}`,
          "content-type": "application/json",
          connection: "close",
        },
      });
      post.on("response", (response) => response.resume().on("end", resolve));
      post.on("error", reject);
      post.end(body);
    });
    await waitRunning([`sleep ${stubborn}`]);
    s.child.kill("SIGTERM");
    expect(await s.exited).toBe(0);
    // Its shell died at the abort's SIGTERM; it ignores that and must not outlive guppy.
    expect(await waitNoneWith(stubborn, 1500)).toBe(true);
  }, 30_000);

  it("keeps serving when its terminal output is gone (a closed pipe), logging to the file only", async () => {
    const dir = home();
    const s = await serve(dir);
    s.child.stdout?.destroy(); // `guppy serve | head -1`: the reader went away
    const openai = client(s);
    for (const text of ["first after the pipe closed", "second"]) {
      const answer = await openai.chat.completions.create(
        { model: "m", messages: [{ role: "user", content: text }] },
        { headers: { "X-Guppy-Thread": "headless" } },
      );
      expect(answer.choices[0]?.message.content).toMatch(/^You said: /);
    }
    expect(s.child.exitCode).toBeNull();
    const log = readFileSync(join(dir, "logs", "gateway.log"), "utf8");
    expect(log).toMatch(/The terminal is gone: guppy serve keeps running/);
    expect(log).toMatch(/"reason":"EPIPE"/);
  }, 20_000);

  it.runIf(existsSync("/dev/full"))(
    "keeps serving when writing its terminal output fails (stdout on a full disk)",
    async () => {
      const dir = home();
      const port = await freePort();
      const full = openSync("/dev/full", "w");
      const child = spawn(process.execPath, [guppyBin, "serve"], {
        env: cleanEnv({ GUPPY_HOME: dir, GUPPY_HTTP_PORT: String(port), ...llm.env() }),
        stdio: ["ignore", full, "ignore"],
      });
      closeSync(full);
      try {
        const url = `http://127.0.0.1:${port}`;
        const up = async () => (await fetch(`${url}/health`).catch(() => undefined))?.ok;
        await waitFor(async () => ((await up()) ? true : undefined), 15_000, "/health");
        const token = readFileSync(join(dir, "api-token"), "utf8").trim();
        const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: token, maxRetries: 0 });
        const answer = await openai.chat.completions.create({
          model: "m",
          messages: [{ role: "user", content: "hello" }],
        });
        expect(answer.choices[0]?.message.content).toMatch(/^You said: hello/);
        expect(child.exitCode).toBeNull();
        const log = readFileSync(join(dir, "logs", "gateway.log"), "utf8");
        expect(log).toMatch(/"reason":"ENOSPC".*The terminal is gone/);
      } finally {
        child.kill("SIGKILL");
      }
    },
    20_000,
  );

  it.each(["SIGTERM", "SIGHUP"] as const)(
    "drains on %s: refuses new work, lets the running turn answer, exits 0",
    async (signal) => {
      const dir = home();
      const s = await serve(dir, { GUPPY_SHUTDOWN_GRACE_SECONDS: "20" });
      const openai = client(s);
      const pending = openai.chat.completions.create(
        {
          model: "m",
          messages: [{ role: "user", content: "run-bash sleep 1.5; echo drained-ok" }],
        },
        { headers: { "X-Guppy-Thread": "drain" } },
      );
      await waitFor(() => (s.stdout().includes("tool bash") ? true : undefined));
      s.child.kill(signal);
      await waitFor(() => (s.stdout().includes(`${signal}: shutting down`) ? true : undefined));
      // A closed terminal may hang up twice: the drain goes on.
      if (signal === "SIGHUP") s.child.kill("SIGHUP");
      const late = await s
        .api("/v1/threads/http:api:late/messages", {
          method: "POST",
          body: JSON.stringify({ text: "too late" }),
        })
        .catch(() => undefined);
      if (late) expect(late.status).toBe(503);
      const answer = await pending;
      expect(answer.choices[0]?.message.content).toBe("Tool said: drained-ok");
      expect(await s.exited).toBe(0);
      expect(s.stdout()).toMatch(/stopped \(1 run/);
      const log = readFileSync(join(dir, "logs", "gateway.log"), "utf8")
        .trim()
        .split("\n");
      expect(log.every((line) => JSON.parse(line).level >= 10)).toBe(true);
      expect(log.some((line) => JSON.parse(line).msg === "shutdown complete")).toBe(true);

      // The next gateway lists the thread with the figures it had, without loading its agent.
      const next = await serve(dir);
      const { threads } = (await (await next.api("/v1/threads")).json()) as {
        threads: Array<{
          id: string;
          state: string;
          last_activity: string | null;
          messages: number;
          tokens: { context: number };
        }>;
      };
      const drained = threads.find((t) => t.id === "http:api:drain");
      expect(drained).toMatchObject({ state: "inactive", messages: 4 });
      expect(Date.parse(drained?.last_activity ?? "")).toBeGreaterThan(Date.now() - 60_000);
      expect(drained?.tokens.context).toBeGreaterThan(0);
    },
    30_000,
  );
});
