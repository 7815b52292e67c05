import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ChatCompletionRequest, FixtureResponse } from "@copilotkit/aimock";
import { afterEach, describe, expect, it } from "vitest";
import { tempHome } from "../helpers/run-cli.js";
import {
  type AsyncMockLlm,
  contentText,
  readSse,
  type ServeProcess,
  startAsyncMockLlm,
  startServe,
  threadMessages,
  waitFor,
} from "./serve-harness.js";

// The heartbeat through `guppy serve`, a real clock (GUPPY_HEARTBEAT_SECONDS=1) and aimock.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const THREAD = "http:api:hb";

const isBeat = (request: ChatCompletionRequest) =>
  request.messages.some(
    (m) => m.role === "user" && contentText(m.content).includes("This is a heartbeat"),
  );

/**
 * A model whose heartbeat answers come from `beatAnswer` after `beatMs`, counting how many beat
 * requests were in flight at once; anything else is echoed.
 */
async function startModel(beatAnswer: () => string, beatMs = 0) {
  const state = { inFlight: 0, maxInFlight: 0 };
  const llm = await startAsyncMockLlm(async (request): Promise<FixtureResponse> => {
    if (!isBeat(request)) {
      const last = request.messages[request.messages.length - 1];
      return { content: `echo: ${contentText(last?.content)}` };
    }
    state.inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    try {
      if (beatMs > 0) await sleep(beatMs);
      return { content: beatAnswer() };
    } finally {
      state.inFlight--;
    }
  });
  return Object.assign(llm, { state, beats: () => llm.requests.filter(isBeat) });
}

describe("guppy serve: heartbeat", () => {
  const cleanups: Array<() => void | Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  const setUp = async (
    llm: AsyncMockLlm,
    heartbeat: string | undefined,
    env: Record<string, string> = {},
  ) => {
    const { home, cleanup } = tempHome();
    cleanups.push(cleanup);
    cleanups.push(() => llm.stop());
    if (heartbeat !== undefined) writeFileSync(join(home, "HEARTBEAT.md"), heartbeat);
    const s = await startServe(home, {
      ...llm.env(),
      GUPPY_SANDBOX: "host",
      GUPPY_HEARTBEAT_SECONDS: "1",
      ...env,
    });
    cleanups.push(async () => {
      if (s.child.exitCode === null && s.child.signalCode === null) {
        s.child.kill("SIGKILL");
        await s.exited;
      }
    });
    return { home, s };
  };

  /** The owner talks on the HTTP thread once: the heartbeat's thread from then on. */
  const talk = async (s: ServeProcess, text: string) => {
    const before = (await threadMessages(s, THREAD)).length;
    await s.api(`/v1/threads/${THREAD}/messages`, {
      method: "POST",
      body: JSON.stringify({ text }),
    });
    await waitFor(
      async () => ((await threadMessages(s, THREAD)).length === before + 2 ? true : undefined),
      20_000,
      "the answer",
    );
  };

  const gatewayLog = (home: string) => readFileSync(join(home, "logs", "gateway.log"), "utf8");
  const contextLines = (home: string) =>
    readFileSync(join(home, "http", "api", "hb", "context.jsonl"), "utf8");

  it("makes no LLM request over 5 intervals when HEARTBEAT.md holds only comments and headings", async () => {
    const llm = await startModel(() => "HEARTBEAT_OK");
    const { home, s } = await setUp(llm, "# Heartbeat\n<!--\n- check the build\n-->\n");
    await talk(s, "hello");
    const requests = llm.requests.length;
    await sleep(5_500);
    expect(llm.requests.length).toBe(requests);
    expect(llm.beats()).toEqual([]);
    expect(gatewayLog(home)).toContain(
      "heartbeat: skipped (HEARTBEAT.md is missing or holds nothing actionable)",
    );
  }, 60_000);

  it("makes no LLM request outside GUPPY_HEARTBEAT_HOURS", async () => {
    const llm = await startModel(() => "HEARTBEAT_OK");
    // A window that starts two hours from now and lasts one hour: now is outside it.
    const hour = (new Date().getUTCHours() + 2) % 24;
    const hh = String(hour).padStart(2, "0");
    const { home, s } = await setUp(llm, "- check the build\n", {
      GUPPY_TIMEZONE: "UTC",
      GUPPY_HEARTBEAT_HOURS: `${hh}:00-${hh}:59`,
    });
    await talk(s, "hello");
    await sleep(4_500);
    expect(llm.beats()).toEqual([]);
    expect(gatewayLog(home)).toContain("heartbeat: skipped (outside GUPPY_HEARTBEAT_HOURS)");
  }, 60_000);

  it("runs an actionable HEARTBEAT.md once per interval, never two at once, and leaves nothing of HEARTBEAT_OK", async () => {
    const llm = await startModel(() => "HEARTBEAT_OK");
    const { home, s } = await setUp(llm, "# Heartbeat\n- check whether the build is green\n");
    await talk(s, "hello");
    const history = await threadMessages(s, THREAD);
    const context = contextLines(home);
    let subscribed = () => {};
    const ready = new Promise<void>((r) => {
      subscribed = r;
    });
    const stream = await s.api(`/v1/threads/${THREAD}/events`);
    const seen = readSse(stream, (e) => {
      if (e === "ready") subscribed();
      return e === "final";
    });
    await ready;
    const t0 = Date.now();
    const base = llm.beats().length;
    await waitFor(() => (llm.beats().length >= base + 3 ? true : undefined), 20_000, "three beats");
    const elapsed = Date.now() - t0;
    // One request per interval at most: a timer fires late on a busy machine, never early (the
    // slack is a beat sent just before t0 and answered after it).
    expect(llm.beats().length - base).toBeLessThanOrEqual(Math.ceil(elapsed / 1000) + 2);
    expect(llm.state.maxInFlight).toBe(1);
    const beat = llm.beats()[0];
    expect(contentText(beat?.messages.at(-1)?.content)).toContain(
      "check whether the build is green",
    );
    expect(contentText(beat?.messages.at(-1)?.content)).toContain("answer exactly HEARTBEAT_OK");
    // Every beat's request carried the same context: the quiet ones before left nothing.
    const sizes = new Set(llm.beats().map((r) => r.messages.length));
    expect(sizes.size).toBe(1);
    await sleep(500);
    expect(await threadMessages(s, THREAD)).toEqual(history);
    expect(contextLines(home)).toBe(context);
    // The stream is alive: the next message of the owner comes through it, and nothing else did.
    await talk(s, "bye");
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
    expect(gatewayLog(home)).toContain(`heartbeat: running HEARTBEAT.md in ${THREAD}`);
  }, 60_000);

  it("skips a beat while the previous one still runs, and delivers an answer that says something", async () => {
    let answer = "HEARTBEAT_OK";
    // Each beat takes 2.5 s: the beats of the two seconds in between are skipped, not queued.
    const llm = await startModel(() => answer, 2_500);
    const { home, s } = await setUp(llm, "- check the build\n");
    await talk(s, "hello");
    await waitFor(() => (llm.beats().length >= 2 ? true : undefined), 30_000, "two beats");
    expect(llm.state.maxInFlight).toBe(1);
    expect(gatewayLog(home)).toContain("heartbeat: skipped (the previous beat still runs)");
    answer = "The build on main is red.";
    const messages = await waitFor(
      async () => {
        const all = await threadMessages(s, THREAD);
        return all.some((m) => m.text === "The build on main is red.") ? all : undefined;
      },
      30_000,
      "the delivered answer",
    );
    // The beat that said something stays in the thread's history, prompt and answer.
    expect(messages.slice(0, 2).map((m) => m.text)).toEqual(["hello", "echo: hello"]);
    expect(messages[2]?.text).toContain("check the build");
    expect(messages[3]).toMatchObject({ is_bot: true, text: "The build on main is red." });
  }, 90_000);

  it("sends a user's message to the model after its local date and time; the history keeps it as typed", async () => {
    const llm = await startModel(() => "HEARTBEAT_OK");
    const { s } = await setUp(llm, undefined, {
      GUPPY_TIMEZONE: "Europe/Berlin",
      GUPPY_HEARTBEAT_SECONDS: "0",
    });
    await talk(s, "what time is it?");
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
    expect((await threadMessages(s, THREAD))[0]?.text).toBe("what time is it?");
  }, 60_000);
});
