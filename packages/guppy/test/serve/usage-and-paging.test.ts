import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LOG_FILE, type LogEntry, threadDirOf } from "@guppy/core/thread-layout";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MockLlm, startMockLlm } from "../helpers/mock-llm.js";
import { cleanEnv, runCli, tempHome } from "../helpers/run-cli.js";
import { type ServeProcess, startServe, threadMessages, waitFor } from "./serve-harness.js";

/** Prices of settings.json's `modelCost`, dollars per million tokens. */
const PRICE = { input: 2, output: 10 };
/** A thread whose log.jsonl the test writes: LONG messages, ids `m0` (oldest) to `m<LONG-1>`. */
const LONG_THREAD = "http:api:long";
const LONG = 3000;

interface MessagesAnswer {
  thread_id: string;
  messages: Array<{ id: string; text: string; is_bot: boolean; from: string }>;
  next_before?: string | null;
}
interface ErrorAnswer {
  error: { message: string; type: string };
}

/**
 * GET /v1/usage and the paging of GET /v1/threads/{id}/messages through `guppy serve`: usage
 * totals equal what the mock LLM reported (and what `guppy usage --json` prints); pages of a
 * long log, walked by `next_before`, give the whole log in order.
 */
describe("GET /v1/usage and message paging", () => {
  let llm: MockLlm;
  const home = tempHome();
  /** Each request's reported usage, in order. */
  const reported: Array<{ input: number; output: number }> = [];
  let serve: ServeProcess;

  beforeAll(async () => {
    llm = await startMockLlm((_request, index) => {
      const usage = { input: 2000 + 211 * index, output: 17 + 5 * index };
      reported.push(usage);
      return {
        content: `answer ${index}`,
        usage: {
          prompt_tokens: usage.input,
          completion_tokens: usage.output,
          total_tokens: usage.input + usage.output,
        },
      };
    });
    writeFileSync(join(home.home, "settings.json"), JSON.stringify({ modelCost: PRICE }));
    const dir = threadDirOf(home.home, LONG_THREAD);
    mkdirSync(dir, { recursive: true });
    const lines: string[] = [];
    for (let i = 0; i < LONG; i++) {
      const entry: LogEntry = {
        date: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
        messageId: `m${i}`,
        userId: i % 2 ? "guppy" : "u1",
        userName: i % 2 ? "guppy" : "Ann",
        text: `message ${i} ${"x".repeat(i % 200)}`,
        isBot: i % 2 === 1,
      };
      lines.push(JSON.stringify(entry));
      // A line torn by a crash mid-write is left out, as the unpaged answer leaves it out.
      if (i === 1500) lines.push('{"date":"2026-01-01T00:25:00.000Z","messageId":"torn","te');
    }
    writeFileSync(join(dir, LOG_FILE), `${lines.join("\n")}\n`);
    serve = await startServe(home.home, {
      ...llm.env("openai-completions"),
      GUPPY_TIMEZONE: "UTC",
      GUPPY_SANDBOX: "host",
    });
  });
  afterAll(async () => {
    serve.child.kill("SIGTERM");
    await serve.exited;
    await llm.stop();
    home.cleanup();
  });

  const getJson = async <T>(path: string, status = 200): Promise<T> => {
    const r = await serve.api(path);
    const body = (await r.json()) as T;
    expect(r.status, JSON.stringify(body)).toBe(status);
    return body;
  };

  it("GET /v1/usage totals what the mock reported, as guppy usage --json prints it", async () => {
    const say = async (thread: string, text: string, answers: number) => {
      const r = await serve.api(`/v1/threads/${thread}/messages`, {
        method: "POST",
        body: JSON.stringify({ text, user: "tester" }),
      });
      expect(r.status).toBe(202);
      await waitFor(
        async () =>
          (await threadMessages(serve, thread)).filter((m) => m.is_bot).length >= answers
            ? true
            : undefined,
        30_000,
        `answer ${answers} in ${thread}`,
      );
    };
    await say("http:api:one", "first", 1);
    await say("http:api:two", "second", 1);
    await say("http:api:one", "third", 2);
    await waitFor(() => (reported.length === 3 ? true : undefined), 10_000, "3 requests");

    const sum = (indexes: number[]) => {
      const input = indexes.reduce((s, i) => s + (reported[i]?.input ?? 0), 0);
      const output = indexes.reduce((s, i) => s + (reported[i]?.output ?? 0), 0);
      return {
        requests: indexes.length,
        input,
        output,
        cache_read: 0,
        cache_write: 0,
        subscription_requests: 0,
        cost: (input * PRICE.input + output * PRICE.output) / 1e6,
      };
    };
    const closeTo = (expected: ReturnType<typeof sum>) => ({
      ...expected,
      cost: expect.closeTo(expected.cost, 10),
    });
    const today = new Date().toISOString().slice(0, 10);

    // Defaults: the last 30 days, by day.
    const byDay = await getJson<Record<string, unknown>>("/v1/usage");
    expect(byDay).toMatchObject({ days: 30, by: "day", to: today });
    expect(byDay.rows).toEqual([{ day: today, ...closeTo(sum([0, 1, 2])) }]);
    expect(byDay.total).toEqual(closeTo(sum([0, 1, 2])));

    const byThread = await getJson<{ rows: unknown[] }>("/v1/usage?by=thread&days=7");
    expect(byThread).toMatchObject({ days: 7, by: "thread" });
    expect(byThread.rows).toEqual([
      { thread: "http:api:one", ...closeTo(sum([0, 2])) },
      { thread: "http:api:two", ...closeTo(sum([1])) },
    ]);
    const byModel = await getJson<{ rows: unknown[] }>("/v1/usage?by=model&days=1");
    expect(byModel.rows).toEqual([{ model: "openai/mock-gpt", ...closeTo(sum([0, 1, 2])) }]);

    // The same report `guppy usage --json` prints: one shape for the CLI and the API.
    for (const [days, by] of [
      ["30", "day"],
      ["7", "thread"],
      ["1", "model"],
    ] as const) {
      const cli = await runCli(["usage", "--json", "--days", days, "--by", by], {
        env: cleanEnv({ GUPPY_HOME: home.home, GUPPY_TIMEZONE: "UTC" }),
      });
      expect(cli.stderr).toBe("");
      expect(await getJson(`/v1/usage?days=${days}&by=${by}`)).toEqual(JSON.parse(cli.stdout));
    }
  });

  it("GET /v1/usage refuses a bad days or by, naming it, and any request without the token", async () => {
    for (const bad of ["0", "-1", "1.5", "x", "", "3661"]) {
      const body = await getJson<ErrorAnswer>(`/v1/usage?days=${encodeURIComponent(bad)}`, 400);
      expect(body.error.type).toBe("invalid_request_error");
      expect(body.error.message).toContain("`days` must be a whole number of days from 1 to 3660");
      expect(body.error.message).toContain(JSON.stringify(bad));
    }
    for (const bad of ["week", "", "Day"]) {
      const body = await getJson<ErrorAnswer>(`/v1/usage?by=${bad}`, 400);
      expect(body.error.message).toBe(
        `\`by\` must be day, thread or model, not ${JSON.stringify(bad)}.`,
      );
    }
    for (const path of ["/v1/usage", `/v1/threads/${LONG_THREAD}/messages?limit=5`]) {
      const r = await fetch(`${serve.url}${path}`);
      expect(r.status).toBe(401);
      expect(((await r.json()) as ErrorAnswer).error.type).toBe("unauthorized");
    }
  });

  it("pages of a long log, walked by next_before, are the whole log in order", async () => {
    const path = `/v1/threads/${LONG_THREAD}/messages`;
    // Without limit or before: the whole log, as before paging, and no next_before.
    const all = await getJson<MessagesAnswer>(path);
    expect(all.messages).toHaveLength(LONG);
    expect(all).not.toHaveProperty("next_before");
    expect(all.messages.map((m) => m.id)).toEqual(Array.from({ length: LONG }, (_, i) => `m${i}`));

    // The last page, then older ones until next_before is null.
    const last = await getJson<MessagesAnswer>(`${path}?limit=5`);
    expect(last.thread_id).toBe("http:api:long");
    expect(last.messages.map((m) => m.id)).toEqual(["m2995", "m2996", "m2997", "m2998", "m2999"]);
    expect(last.messages[4]).toEqual({
      id: "m2999",
      date: "2026-01-01T00:49:59.000Z",
      from: "guppy",
      is_bot: true,
      text: `message 2999 ${"x".repeat(2999 % 200)}`,
    });
    expect(last.next_before).toBe("m2995");

    const pages: MessagesAnswer[] = [];
    let before: string | null | undefined;
    do {
      const page = await getJson<MessagesAnswer>(
        `${path}?limit=1000${before ? `&before=${before}` : ""}`,
      );
      pages.unshift(page);
      before = page.next_before;
    } while (before && pages.length < 10);
    expect(pages.map((p) => p.messages.length)).toEqual([1000, 1000, 1000]);
    expect(pages[0]?.next_before).toBeNull();
    expect(pages[1]?.next_before).toBe("m1000");
    expect(pages.flatMap((p) => p.messages)).toEqual(all.messages);

    // `before` alone: the 100 before it; at the start, fewer and null.
    const older = await getJson<MessagesAnswer>(`${path}?before=m1501`);
    expect(older.messages.map((m) => m.id)).toEqual(
      Array.from({ length: 100 }, (_, i) => `m${1401 + i}`),
    );
    expect(older.next_before).toBe("m1401");
    const first = await getJson<MessagesAnswer>(`${path}?before=m3&limit=10`);
    expect(first.messages.map((m) => m.id)).toEqual(["m0", "m1", "m2"]);
    expect(first.next_before).toBeNull();
    const none = await getJson<MessagesAnswer>(`${path}?before=m0&limit=10`);
    expect(none).toEqual({ thread_id: LONG_THREAD, messages: [], next_before: null });

    // A short thread's one page holds it all.
    const short = await getJson<MessagesAnswer>("/v1/threads/http:api:two/messages?limit=50");
    expect(short.messages.map((m) => m.text)).toEqual(["second", "answer 1"]);
    expect(short.next_before).toBeNull();
  });

  it("refuses a bad limit or before (400) and an unknown before (404)", async () => {
    const path = `/v1/threads/${LONG_THREAD}/messages`;
    for (const bad of ["0", "1001", "-3", "2.5", "ten", "", "01"]) {
      const body = await getJson<ErrorAnswer>(`${path}?limit=${encodeURIComponent(bad)}`, 400);
      expect(body.error).toEqual({
        message: `\`limit\` must be a whole number from 1 to 1000, not ${JSON.stringify(bad)}.`,
        type: "invalid_request_error",
      });
    }
    const empty = await getJson<ErrorAnswer>(`${path}?before=`, 400);
    expect(empty.error.message).toContain("`before`");
    const unknown = await getJson<ErrorAnswer>(`${path}?before=m3000&limit=3`, 404);
    expect(unknown.error).toEqual({
      message: `No message "m3000" in thread ${LONG_THREAD} (\`before\`).`,
      type: "not_found",
    });
    // The torn line is no message.
    await getJson<ErrorAnswer>(`${path}?before=torn`, 404);
    // An unknown thread is still a 404 of its own.
    const thread = await getJson<ErrorAnswer>("/v1/threads/http:api:nope/messages?limit=3", 404);
    expect(thread.error.message).toContain("Unknown thread");
  });
});
