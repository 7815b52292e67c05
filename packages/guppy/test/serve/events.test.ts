import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import type { ChatCompletionRequest, FixtureResponse } from "@copilotkit/aimock";
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { tempHome } from "../helpers/run-cli.js";
import {
  type AsyncMockLlm,
  contentText,
  type ServeProcess,
  startAsyncMockLlm,
  startServe,
  waitFor,
} from "./serve-harness.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** When each request came (by the test's clock), beside aimock's journal. */
const arrivals: Array<{ at: number; request: ChatCompletionRequest }> = [];

/**
 * The scripted model: "use-schedule {json}" asks for the schedule tool with that json; a tool
 * result is answered "Tool said: <its first line>"; anything else "ack: <text>".
 */
async function script(request: ChatCompletionRequest): Promise<FixtureResponse> {
  arrivals.push({ at: Date.now(), request: structuredClone(request) });
  const last = request.messages[request.messages.length - 1];
  if (last?.role === "tool")
    return { content: `Tool said: ${contentText(last.content).split("\n")[0]}` };
  const text = contentText(last?.content);
  const schedule = /use-schedule (\{.*\})/.exec(text);
  if (schedule?.[1]) return { toolCalls: [{ name: "schedule", arguments: schedule[1] }] };
  return { content: `ack: ${text}` };
}

/** The requests whose last user message holds `marker`, with their arrival times. */
const seen = (marker: string) =>
  arrivals.filter(({ request }) => {
    const users = request.messages.filter((m) => m.role === "user");
    return (
      contentText(users[users.length - 1]?.content).includes(marker) &&
      request.messages[request.messages.length - 1]?.role === "user"
    );
  });

describe("scheduled events through guppy serve (real files, real clock)", () => {
  let llm: AsyncMockLlm;
  const homes: Array<ReturnType<typeof tempHome>> = [];
  const running: ServeProcess[] = [];
  const home = () => {
    const h = tempHome();
    homes.push(h);
    mkdirSync(join(h.home, "events"), { recursive: true });
    return h.home;
  };
  const serve = async (dir: string) => {
    const s = await startServe(dir, { ...llm.env(), GUPPY_SANDBOX: "host", GUPPY_TIMEZONE: "UTC" });
    running.push(s);
    return s;
  };
  const stop = async (s: ServeProcess, signal: NodeJS.Signals = "SIGTERM") => {
    s.child.kill(signal);
    await s.exited;
  };
  const writeEvent = (dir: string, id: string, fields: Record<string, unknown>) =>
    writeFileSync(join(dir, "events", `${id}.json`), JSON.stringify(fields));

  beforeAll(async () => {
    llm = await startAsyncMockLlm(script);
  });
  afterEach(async () => {
    for (const s of running.splice(0)) {
      if (s.child.exitCode === null && s.child.signalCode === null) {
        s.child.kill("SIGKILL");
        await s.exited;
      }
    }
  });
  afterAll(async () => {
    await llm.stop();
    for (const h of homes) h.cleanup();
  });

  it("fires an immediate file once, marked with its name, and removes it", async () => {
    const dir = home();
    const s = await serve(dir);
    writeEvent(dir, "ping", { type: "immediate", threadId: "http:api:imm", text: "imm-marker" });
    await waitFor(
      () => (seen("imm-marker").length > 0 ? true : undefined),
      15_000,
      "the event's request",
    );
    const [first] = seen("imm-marker");
    const users = first?.request.messages.filter((m) => m.role === "user") ?? [];
    expect(contentText(users[users.length - 1]?.content)).toContain(
      '[scheduled event "ping"] imm-marker',
    );
    await waitFor(
      () => (existsSync(join(dir, "events", "ping.json")) ? undefined : true),
      5000,
      "removal",
    );
    await waitFor(
      () => (/event "ping" fired/.test(s.stdout()) ? true : undefined),
      5000,
      "log line",
    );
    expect(s.stdout()).toMatch(/http:api:imm\s+event "ping" fired/);
    await sleep(1500);
    expect(seen("imm-marker")).toHaveLength(1);
  });

  it("fires a one-shot at now+2 s once, not before", async () => {
    const dir = home();
    await serve(dir);
    const at = Math.ceil((Date.now() + 2000) / 1000) * 1000;
    writeEvent(dir, "soon", {
      type: "one-shot",
      threadId: "http:api:soon",
      text: "oneshot-marker",
      schedule: new Date(at).toISOString().replace(".000Z", "Z"),
    });
    await waitFor(
      () => (seen("oneshot-marker").length > 0 ? true : undefined),
      15_000,
      "the one-shot",
    );
    expect(seen("oneshot-marker")[0]?.at).toBeGreaterThanOrEqual(at);
    await sleep(2000);
    expect(seen("oneshot-marker")).toHaveLength(1);
    expect(existsSync(join(dir, "events", "soon.json"))).toBe(false);
  });

  it("fires a 6-field periodic event every 2 s at least 3 times in 7 s, and again after a restart", async () => {
    const dir = home();
    const first = await serve(dir);
    writeEvent(dir, "tick", {
      type: "periodic",
      threadId: "http:api:tick",
      text: "periodic-marker",
      schedule: "*/2 * * * * *",
    });
    await sleep(7000);
    expect(seen("periodic-marker").length).toBeGreaterThanOrEqual(3);
    await stop(first);
    const before = seen("periodic-marker").length;
    await serve(dir);
    await waitFor(
      () => (seen("periodic-marker").length >= before + 2 ? true : undefined),
      15_000,
      "firings after the restart",
    );
    // Each slot once: the prompts' texts are the same, their arrival times two seconds apart.
    const times = seen("periodic-marker").map((a) => a.at);
    for (let i = 1; i < times.length; i++) {
      expect((times[i] ?? 0) - (times[i - 1] ?? 0)).toBeGreaterThan(500);
    }
  }, 40_000);

  it("fires a one-shot whose time passed during a kill -9 once at the next start, marked late", async () => {
    const dir = home();
    const first = await serve(dir);
    const at = Math.ceil((Date.now() + 3000) / 1000) * 1000;
    writeEvent(dir, "missed", {
      type: "one-shot",
      threadId: "http:api:late",
      text: "late-marker",
      schedule: new Date(at).toISOString().replace(".000Z", "Z"),
    });
    await sleep(500);
    await stop(first, "SIGKILL");
    await sleep(Math.max(0, at - Date.now()) + 1500);
    expect(seen("late-marker")).toHaveLength(0);
    const second = await serve(dir);
    await waitFor(
      () => (seen("late-marker").length > 0 ? true : undefined),
      15_000,
      "the late one-shot",
    );
    const users = seen("late-marker")[0]?.request.messages.filter((m) => m.role === "user") ?? [];
    expect(contentText(users[users.length - 1]?.content)).toMatch(
      /\[scheduled event "missed", late: it was due .*\] late-marker/,
    );
    await waitFor(
      () => (/event "missed" fired \(late/.test(second.stdout()) ? true : undefined),
      5000,
      "log line",
    );
    await stop(second);
    await serve(dir);
    await sleep(1500);
    expect(seen("late-marker")).toHaveLength(1);
  }, 40_000);

  it("picks up a half-written file once it is complete, and renames an invalid one naming the problem", async () => {
    const dir = home();
    const s = await serve(dir);
    const path = join(dir, "events", "half.json");
    const body = JSON.stringify({
      type: "immediate",
      threadId: "http:api:half",
      text: "half-marker",
    });
    writeFileSync(path, body.slice(0, 20));
    await sleep(350);
    appendFileSync(path, body.slice(20));
    await waitFor(
      () => (seen("half-marker").length > 0 ? true : undefined),
      15_000,
      "the completed file",
    );
    writeEvent(dir, "bad", { type: "sometimes", threadId: "http:api:bad", text: "bad-marker" });
    await waitFor(
      () => (existsSync(join(dir, "events", "bad.json.invalid")) ? true : undefined),
      15_000,
      "the rename",
    );
    expect(existsSync(join(dir, "events", "bad.json"))).toBe(false);
    await waitFor(
      () => (/event file bad\.json is invalid/.test(s.stdout()) ? true : undefined),
      5000,
      "log",
    );
    expect(s.stdout()).toMatch(
      /event file bad\.json is invalid: "type" must be immediate, one-shot, periodic \(got "sometimes"\); renamed to .*bad\.json\.invalid/,
    );
    expect(readdirSync(join(dir, "events")).filter((f) => f.endsWith(".invalid"))).toEqual([
      "bad.json.invalid",
    ]);
    expect(seen("bad-marker")).toHaveLength(0);
    expect(seen("half-marker")).toHaveLength(1);
  }, 30_000);

  it("fires the schedule tool's event into the thread that made it, and shows it in GET /v1/threads meanwhile", async () => {
    const dir = home();
    const s = await serve(dir);
    const openai = new OpenAI({
      baseURL: `${s.url}/v1`,
      apiKey: s.token,
      maxRetries: 0,
      timeout: 20_000,
    });
    const at = new Date(Math.ceil((Date.now() + 4000) / 1000) * 1000)
      .toISOString()
      .replace(".000Z", "Z");
    const args = JSON.stringify({
      action: "create",
      type: "one-shot",
      text: "tool-marker",
      schedule: at,
      id: "from-tool",
    });
    const answer = await openai.chat.completions.create(
      { model: "m", messages: [{ role: "user", content: `use-schedule ${args}` }] },
      { headers: { "X-Guppy-Thread": "sched" } },
    );
    expect(answer.choices[0]?.message.content).toMatch(
      /^Tool said: Scheduled event from-tool \(one-shot\) for http:api:sched; next run: /,
    );
    const file = JSON.parse(readFileSync(join(dir, "events", "from-tool.json"), "utf8"));
    expect(file).toMatchObject({
      type: "one-shot",
      threadId: "http:api:sched",
      text: "tool-marker",
    });
    // The bus reads the new file after the watcher's debounce.
    const listed = await waitFor(
      async () => {
        const body = await (await s.api("/v1/threads")).text();
        return body.includes('"events":') ? body : undefined;
      },
      10_000,
      "the event in GET /v1/threads",
    );
    expect(listed).toContain('"events":[{"id":"from-tool","type":"one-shot"');
    await waitFor(
      () => (seen("tool-marker").length > 0 ? true : undefined),
      15_000,
      "the tool's event",
    );
    // Same thread: the request carries the conversation that scheduled it.
    const request = seen("tool-marker")[0]?.request;
    expect(request?.messages.some((m) => contentText(m.content).includes("use-schedule"))).toBe(
      true,
    );
  }, 30_000);
});
