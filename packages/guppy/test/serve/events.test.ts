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
import { gatewayTest, skewableClock } from "../helpers/gateway-fixture.js";
import { tempHome } from "../helpers/run-cli.js";
import {
  type AsyncMockLlm,
  contentText,
  type ServeProcess,
  startAsyncMockLlm,
  startServe,
  stopServes,
  waitFor,
} from "./serve-harness.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The event bus's time: it runs with the real one, and a test moves it ahead to a one-shot's or
 * a periodic slot's time instead of waiting for it.
 */
const clock = skewableClock();

/** When each request came (by the bus's clock), beside aimock's journal. */
const arrivals: Array<{ at: number; request: ChatCompletionRequest }> = [];

/**
 * The scripted model: "use-schedule {json}" asks for the schedule tool with that json; a tool
 * result is answered "Tool said: <its first line>"; anything else "ack: <text>".
 */
async function script(request: ChatCompletionRequest): Promise<FixtureResponse> {
  arrivals.push({ at: clock.now(), request: structuredClone(request) });
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

const writeEvent = (dir: string, id: string, fields: Record<string, unknown>) =>
  writeFileSync(join(dir, "events", `${id}.json`), JSON.stringify(fields));

/**
 * A whole second `ms` ahead of the bus's clock, as a schedule spells it. A minute ahead, the
 * real timer under the clock never reaches it during a test: only the test's `advance` does.
 */
const secondAhead = (ms: number) => Math.ceil((clock.now() + ms) / 1000) * 1000;
const iso = (at: number) => new Date(at).toISOString().replace(".000Z", "Z");

const test = gatewayTest(script);
const env = { GUPPY_SANDBOX: "host", GUPPY_TIMEZONE: "UTC" };

describe("scheduled events through the gateway (real files, the bus's clock moved ahead)", () => {
  test("fires an immediate file once, marked with its name, and removes it", async ({
    home,
    gateway,
  }) => {
    mkdirSync(join(home, "events"));
    const g = await gateway({ env, clock });
    writeEvent(home, "ping", { type: "immediate", threadId: "http:api:imm", text: "imm-marker" });
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
      () => (existsSync(join(home, "events", "ping.json")) ? undefined : true),
      5000,
      "removal",
    );
    await waitFor(
      () => (/event "ping" fired/.test(g.terminal()) ? true : undefined),
      5000,
      "log line",
    );
    expect(g.terminal()).toMatch(/http:api:imm\s+event "ping" fired/);
    // Fired once: the bus holds it no more, and the answer came to that one prompt.
    expect(g.runtime.events?.list().map((e) => e.id)).not.toContain("ping");
    await waitFor(
      () => {
        const { state, queued } = g.runtime.orchestrator.status("http:api:imm");
        return state === "running" || queued > 0 ? undefined : true;
      },
      5000,
      "the run's end",
    );
    expect(seen("imm-marker")).toHaveLength(1);
  });

  test("fires a one-shot once at its time, not before", async ({ home, gateway }) => {
    mkdirSync(join(home, "events"));
    const g = await gateway({ env, clock });
    const at = secondAhead(60_000);
    writeEvent(home, "soon", {
      type: "one-shot",
      threadId: "http:api:soon",
      text: "oneshot-marker",
      schedule: iso(at),
    });
    await waitFor(
      () => (g.runtime.events?.list().some((e) => e.id === "soon") ? true : undefined),
      10_000,
      "the one-shot loaded",
    );
    clock.advance(at - 1 - clock.now());
    expect(seen("oneshot-marker")).toHaveLength(0);
    expect(existsSync(join(home, "events", "soon.json"))).toBe(true);
    clock.advance(1);
    await waitFor(
      () => (seen("oneshot-marker").length > 0 ? true : undefined),
      15_000,
      "the one-shot",
    );
    expect(seen("oneshot-marker")[0]?.at).toBeGreaterThanOrEqual(at);
    await waitFor(
      () => (existsSync(join(home, "events", "soon.json")) ? undefined : true),
      5000,
      "removal",
    );
    clock.advance(60_000);
    expect(g.runtime.events?.list().map((e) => e.id)).not.toContain("soon");
    expect(seen("oneshot-marker")).toHaveLength(1);
  });

  test("fires a 6-field periodic event every 2 s, and again after a restart", async ({
    home,
    gateway,
  }) => {
    mkdirSync(join(home, "events"));
    const first = await gateway({ env, clock });
    writeEvent(home, "tick", {
      type: "periodic",
      threadId: "http:api:tick",
      text: "periodic-marker",
      schedule: "*/2 * * * * *",
    });
    await waitFor(
      () => (first.runtime.events?.list().some((e) => e.id === "tick") ? true : undefined),
      10_000,
      "the periodic event loaded",
    );
    const slots = async (count: number) => {
      const target = seen("periodic-marker").length + count;
      for (let i = 0; i < count; i++) clock.advance(2000);
      await waitFor(
        () => (seen("periodic-marker").length >= target ? true : undefined),
        15_000,
        "the periodic firings",
      );
    };
    for (let i = 0; i < 3; i++) await slots(1);
    expect(seen("periodic-marker").length).toBeGreaterThanOrEqual(3);
    await first.stop();
    const before = seen("periodic-marker").length;
    const second = await gateway({ env, clock });
    await waitFor(
      () => (second.runtime.events?.list().some((e) => e.id === "tick") ? true : undefined),
      10_000,
      "the periodic event loaded again",
    );
    for (let i = 0; i < 2; i++) await slots(1);
    expect(seen("periodic-marker").length).toBeGreaterThanOrEqual(before + 2);
    // Each slot once: a slot's prompt is sent after its `firing` line in the runs journal, and
    // no slot has two. (Not by arrival times: a slot the real timer fires and the next one the
    // test's advance fires may queue on the thread and reach the model close together.)
    const slotsFired = readFileSync(join(home, "events", ".runs.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { id: string; slot: number; status: string })
      .filter((r) => r.id === "tick" && r.status === "firing")
      .map((r) => r.slot);
    expect(slotsFired.length).toBeGreaterThan(0);
    expect(new Set(slotsFired).size).toBe(slotsFired.length);
  });

  test("picks up a half-written file once it is complete, and renames an invalid one naming the problem", async ({
    home,
    gateway,
  }) => {
    mkdirSync(join(home, "events"));
    const g = await gateway({ env, clock });
    const path = join(home, "events", "half.json");
    const body = JSON.stringify({
      type: "immediate",
      threadId: "http:api:half",
      text: "half-marker",
    });
    writeFileSync(path, body.slice(0, 20));
    // The folder's watcher (real time, not the bus's clock) sees the half first.
    await sleep(350);
    appendFileSync(path, body.slice(20));
    await waitFor(
      () => (seen("half-marker").length > 0 ? true : undefined),
      15_000,
      "the completed file",
    );
    writeEvent(home, "bad", { type: "sometimes", threadId: "http:api:bad", text: "bad-marker" });
    await waitFor(
      () => (existsSync(join(home, "events", "bad.json.invalid")) ? true : undefined),
      15_000,
      "the rename",
    );
    expect(existsSync(join(home, "events", "bad.json"))).toBe(false);
    await waitFor(
      () => (/event file bad\.json is invalid/.test(g.terminal()) ? true : undefined),
      5000,
      "log",
    );
    expect(g.terminal()).toMatch(
      /event file bad\.json is invalid: "type" must be immediate, one-shot, periodic \(got "sometimes"\); renamed to .*bad\.json\.invalid/,
    );
    expect(readdirSync(join(home, "events")).filter((f) => f.endsWith(".invalid"))).toEqual([
      "bad.json.invalid",
    ]);
    expect(seen("bad-marker")).toHaveLength(0);
    expect(seen("half-marker")).toHaveLength(1);
  });

  test("fires the schedule tool's event into the thread that made it, and shows it in GET /v1/threads meanwhile", async ({
    home,
    gateway,
  }) => {
    const g = await gateway({ env, clock });
    const openai = new OpenAI({
      baseURL: `${g.url}/v1`,
      apiKey: g.token,
      maxRetries: 0,
      timeout: 20_000,
    });
    const at = secondAhead(60_000);
    const args = JSON.stringify({
      action: "create",
      type: "one-shot",
      text: "tool-marker",
      schedule: iso(at),
      id: "from-tool",
    });
    const answer = await openai.chat.completions.create(
      { model: "m", messages: [{ role: "user", content: `use-schedule ${args}` }] },
      { headers: { "X-Guppy-Thread": "sched" } },
    );
    expect(answer.choices[0]?.message.content).toMatch(
      /^Tool said: Scheduled event from-tool \(one-shot\) for http:api:sched; next run: /,
    );
    const file = JSON.parse(readFileSync(join(home, "events", "from-tool.json"), "utf8"));
    expect(file).toMatchObject({
      type: "one-shot",
      threadId: "http:api:sched",
      text: "tool-marker",
    });
    // The bus reads the new file after the watcher's debounce.
    const listed = await waitFor(
      async () => {
        const body = await (await g.api("/v1/threads")).text();
        return body.includes('"events":') ? body : undefined;
      },
      10_000,
      "the event in GET /v1/threads",
    );
    expect(listed).toContain('"events":[{"id":"from-tool","type":"one-shot"');
    // Not fired before its time (the prompt that scheduled it holds the marker too).
    const fired = () => seen('[scheduled event "from-tool"] tool-marker');
    expect(fired()).toHaveLength(0);
    clock.advance(at - clock.now());
    await waitFor(() => (fired().length > 0 ? true : undefined), 15_000, "the tool's event");
    // Same thread: the request carries the conversation that scheduled it.
    const request = fired()[0]?.request;
    expect(request?.messages.some((m) => contentText(m.content).includes("use-schedule"))).toBe(
      true,
    );
  });
});

describe("a one-shot missed while guppy serve was killed (a real process, real clock)", () => {
  let llm: AsyncMockLlm;
  const homes: Array<ReturnType<typeof tempHome>> = [];
  const running: ServeProcess[] = [];
  const serve = async (dir: string) => {
    const s = await startServe(dir, { ...llm.env(), ...env });
    running.push(s);
    return s;
  };
  const stop = async (s: ServeProcess, signal: NodeJS.Signals = "SIGTERM") => {
    s.child.kill(signal);
    await s.exited;
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

  it("fires a one-shot whose time passed during a kill -9 once at the next start, marked late", async () => {
    const h = tempHome();
    homes.push(h);
    const dir = h.home;
    mkdirSync(join(dir, "events"));
    const first = await serve(dir);
    const at = Math.ceil((Date.now() + 3000) / 1000) * 1000;
    writeEvent(dir, "missed", {
      type: "one-shot",
      threadId: "http:api:late",
      text: "late-marker",
      schedule: iso(at),
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
});
