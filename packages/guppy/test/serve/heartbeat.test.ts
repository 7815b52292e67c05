import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ChatCompletionRequest, FixtureResponse } from "@copilotkit/aimock";
import { afterEach, beforeEach, describe, expect, vi } from "vitest";
import { gatewayTest, type InProcessGateway } from "../helpers/gateway-fixture.js";
import { contentText, readSse, threadMessages, waitFor } from "./serve-harness.js";

// The heartbeat through an in-process gateway and aimock: GUPPY_HEARTBEAT_SECONDS=1 on a faked
// setInterval (the heartbeat's timer), so each interval is a step of the test, not a second.

const THREAD = "http:api:hb";

const isBeat = (request: ChatCompletionRequest) =>
  request.messages.some(
    (m) => m.role === "user" && contentText(m.content).includes("This is a heartbeat"),
  );

/**
 * The model: heartbeat answers are `model.answer`, given once `model.gate` (when set) resolves,
 * counting how many beat requests were in flight at once; anything else is echoed.
 */
const model = {
  answer: "HEARTBEAT_OK",
  gate: undefined as Promise<void> | undefined,
  inFlight: 0,
  maxInFlight: 0,
  requests: [] as ChatCompletionRequest[],
};
const beats = () => model.requests.filter(isBeat);

const test = gatewayTest(async (request): Promise<FixtureResponse> => {
  model.requests.push(request);
  if (!isBeat(request)) {
    const last = request.messages[request.messages.length - 1];
    return { content: `echo: ${contentText(last?.content)}` };
  }
  model.inFlight++;
  model.maxInFlight = Math.max(model.maxInFlight, model.inFlight);
  try {
    await model.gate;
    return { content: model.answer };
  } finally {
    model.inFlight--;
  }
});

describe("gateway: heartbeat", () => {
  beforeEach(() => {
    Object.assign(model, {
      answer: "HEARTBEAT_OK",
      gate: undefined,
      inFlight: 0,
      maxInFlight: 0,
      requests: [],
    });
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** One heartbeat interval passes. */
  const interval = () => vi.advanceTimersByTime(1000);

  const setUp = async (
    home: string,
    gateway: (options: { env: Record<string, string> }) => Promise<InProcessGateway>,
    heartbeat: string | undefined,
    env: Record<string, string> = {},
  ) => {
    if (heartbeat !== undefined) writeFileSync(join(home, "HEARTBEAT.md"), heartbeat);
    return gateway({ env: { GUPPY_SANDBOX: "host", GUPPY_HEARTBEAT_SECONDS: "1", ...env } });
  };

  /** The owner talks on the HTTP thread once: the heartbeat's thread from then on. */
  const talk = async (g: InProcessGateway, text: string) => {
    const before = (await threadMessages(g, THREAD)).length;
    await g.api(`/v1/threads/${THREAD}/messages`, {
      method: "POST",
      body: JSON.stringify({ text }),
    });
    await waitFor(
      async () => ((await threadMessages(g, THREAD)).length === before + 2 ? true : undefined),
      20_000,
      "the answer",
    );
  };

  /** The thread's run (a beat's) has ended and nothing waits. */
  const settled = (g: InProcessGateway) =>
    waitFor(
      () => {
        const { state, queued } = g.runtime.orchestrator.status(THREAD);
        return state !== "running" && state !== "waiting" && queued === 0 ? true : undefined;
      },
      20_000,
      "the thread's run to end",
    );

  const contextLines = (home: string) =>
    readFileSync(join(home, "http", "api", "hb", "context.jsonl"), "utf8");

  test("makes no LLM request over 5 intervals when HEARTBEAT.md holds only comments and headings", async ({
    home,
    gateway,
  }) => {
    const g = await setUp(home, gateway, "# Heartbeat\n<!--\n- check the build\n-->\n");
    await talk(g, "hello");
    const requests = model.requests.length;
    for (let i = 0; i < 5; i++) interval();
    // A beat decides before any request (synchronously, in its timer's callback).
    expect(model.requests.length).toBe(requests);
    expect(beats()).toEqual([]);
    expect(g.log()).toContain(
      "heartbeat: skipped (HEARTBEAT.md is missing or holds nothing actionable)",
    );
  });

  test("makes no LLM request outside GUPPY_HEARTBEAT_HOURS", async ({ home, gateway }) => {
    // A window that starts two hours from now and lasts one hour: now is outside it.
    const hour = (new Date().getUTCHours() + 2) % 24;
    const hh = String(hour).padStart(2, "0");
    const g = await setUp(home, gateway, "- check the build\n", {
      GUPPY_TIMEZONE: "UTC",
      GUPPY_HEARTBEAT_HOURS: `${hh}:00-${hh}:59`,
    });
    await talk(g, "hello");
    for (let i = 0; i < 4; i++) interval();
    expect(beats()).toEqual([]);
    expect(g.log()).toContain("heartbeat: skipped (outside GUPPY_HEARTBEAT_HOURS)");
  });

  test("runs an actionable HEARTBEAT.md once per interval, never two at once, and leaves nothing of HEARTBEAT_OK", async ({
    home,
    gateway,
  }) => {
    const g = await setUp(home, gateway, "# Heartbeat\n- check whether the build is green\n");
    await talk(g, "hello");
    const history = await threadMessages(g, THREAD);
    const context = contextLines(home);
    let subscribed = () => {};
    const ready = new Promise<void>((r) => {
      subscribed = r;
    });
    const stream = await g.api(`/v1/threads/${THREAD}/events`);
    const seen = readSse(stream, (e) => {
      if (e === "ready") subscribed();
      return e === "final";
    });
    await ready;
    // One request per interval: each interval's beat is sent, answered and over before the next.
    for (let i = 1; i <= 3; i++) {
      interval();
      await waitFor(() => (beats().length >= i ? true : undefined), 20_000, `beat ${i}`);
      await settled(g);
      expect(beats()).toHaveLength(i);
    }
    expect(model.maxInFlight).toBe(1);
    const beat = beats()[0];
    expect(contentText(beat?.messages.at(-1)?.content)).toContain(
      "check whether the build is green",
    );
    expect(contentText(beat?.messages.at(-1)?.content)).toContain("answer exactly HEARTBEAT_OK");
    // Every beat's request carried the same context: the quiet ones before left nothing.
    const sizes = new Set(beats().map((r) => r.messages.length));
    expect(sizes.size).toBe(1);
    expect(await threadMessages(g, THREAD)).toEqual(history);
    expect(contextLines(home)).toBe(context);
    // The stream is alive: the next message of the owner comes through it, and nothing else did.
    await talk(g, "bye");
    const events = await seen;
    const shown = events.filter((e) => ["start", "text_delta", "final"].includes(e.event));
    // One run (the owner's): its start, its text in one delta or more (as the stream was cut
    // into chunks on the way), its final.
    const kinds = shown.map((e) => e.event);
    expect(kinds[0]).toBe("start");
    expect(kinds.at(-1)).toBe("final");
    expect(kinds.slice(1, -1).length).toBeGreaterThan(0);
    expect(new Set(kinds.slice(1, -1))).toEqual(new Set(["text_delta"]));
    expect(shown[0]?.data.text).toBe("bye");
    expect(JSON.stringify(events)).not.toContain("HEARTBEAT");
    expect(g.log()).toContain(`heartbeat: running HEARTBEAT.md in ${THREAD}`);
  });

  test("skips a beat while the previous one still runs, and delivers an answer that says something", async ({
    home,
    gateway,
  }) => {
    // The first beat's answer waits for the test: the intervals meanwhile are skipped, not queued.
    let release = () => {};
    model.gate = new Promise<void>((r) => {
      release = r;
    });
    const g = await setUp(home, gateway, "- check the build\n");
    await talk(g, "hello");
    interval();
    await waitFor(() => (beats().length >= 1 ? true : undefined), 20_000, "the first beat");
    interval();
    interval();
    expect(g.log()).toContain("heartbeat: skipped (the previous beat still runs)");
    release();
    await settled(g);
    expect(beats()).toHaveLength(1);
    model.answer = "The build on main is red.";
    interval();
    const messages = await waitFor(
      async () => {
        const all = await threadMessages(g, THREAD);
        return all.some((m) => m.text === "The build on main is red.") ? all : undefined;
      },
      30_000,
      "the delivered answer",
    );
    expect(beats()).toHaveLength(2);
    expect(model.maxInFlight).toBe(1);
    // The beat that said something stays in the thread's history, prompt and answer.
    expect(messages.slice(0, 2).map((m) => m.text)).toEqual(["hello", "echo: hello"]);
    expect(messages[2]?.text).toContain("check the build");
    expect(messages[3]).toMatchObject({ is_bot: true, text: "The build on main is red." });
  });

  test("sends a user's message to the model after its local date and time; the history keeps it as typed", async ({
    home,
    gateway,
    llm,
  }) => {
    const g = await setUp(home, gateway, undefined, {
      GUPPY_TIMEZONE: "Europe/Berlin",
      GUPPY_HEARTBEAT_SECONDS: "0",
    });
    await talk(g, "what time is it?");
    const raw = llm.rawRequests.at(-1);
    const sent = contentText(raw?.messages.at(-1)?.content);
    expect(sent).toMatch(
      /^\[(Mon|Tue|Wed|Thu|Fri|Sat|Sun) \d{4}-\d{2}-\d{2} \d{2}:\d{2} Europe\/Berlin\] what time is it\?$/,
    );
    // The stamp is the time it was sent at, in that zone.
    const berlin = new Intl.DateTimeFormat("en-CA", {
      timeZone: "Europe/Berlin",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
    }).format(new Date());
    expect(sent).toContain(berlin);
    expect((await threadMessages(g, THREAD))[0]?.text).toBe("what time is it?");
  });
});
