import { type Logger, silentLogger } from "@guppy/core";
import { describe, expect, it } from "vitest";
import {
  classifySendError,
  withRateLimitRetry,
} from "../../src/channels/bridge/rate-limit-retry.js";
import { createReplyStream, type ReplyTarget } from "../../src/channels/bridge/reply-stream.js";
import { splitMessage } from "../../src/channels/bridge/split-message.js";

/** Errors shaped as the Chat SDK adapters throw them (@chat-adapter/shared). */
const adapterError = (name: string, message: string, fields: Record<string, unknown> = {}) =>
  Object.assign(new Error(message), { name, ...fields });
const serverError = () => adapterError("NetworkError", "Internal Server Error (status 500)");
const refusal = (description: string) => adapterError("ValidationError", description);

/**
 * A chat thread in memory: messages with their edit history and timestamps. `failures` are
 * thrown, in order, by the calls of their kind (a post or an edit) until used up.
 */
function memoryTarget(
  options: {
    rateLimitFirstPost?: number;
    failures?: Array<{ on: "post" | "edit"; error: Error }>;
  } = {},
) {
  const messages: string[] = [];
  const calls: Array<{ kind: "post" | "edit" | "typing"; at: number; failed?: boolean }> = [];
  let limited = options.rateLimitFirstPost;
  const failures = [...(options.failures ?? [])];
  const failure = (kind: "post" | "edit"): Error | undefined => {
    const i = failures.findIndex((f) => f.on === kind);
    return i === -1 ? undefined : failures.splice(i, 1)[0]?.error;
  };
  const target: ReplyTarget = {
    async post(markdown) {
      const error = failure("post");
      calls.push({ kind: "post", at: Date.now(), ...(error ? { failed: true } : {}) });
      if (error) throw error;
      if (limited !== undefined) {
        const retryAfter = limited;
        limited = undefined;
        throw adapterError("AdapterRateLimitError", "Rate limited by telegram", { retryAfter });
      }
      const index = messages.push(markdown) - 1;
      return {
        edit: async (text) => {
          const error = failure("edit");
          calls.push({ kind: "edit", at: Date.now(), ...(error ? { failed: true } : {}) });
          if (error) throw error;
          messages[index] = text;
        },
      };
    },
    async startTyping() {
      calls.push({ kind: "typing", at: Date.now() });
    },
  };
  return { target, messages, calls };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A logger that keeps what it is given. */
function recordingLogger() {
  const entries: Array<{ level: string; message: string; fields?: Record<string, unknown> }> = [];
  const at =
    (level: string) =>
    (message: string, fields?: Record<string, unknown>): void =>
      void entries.push({ level, message, ...(fields ? { fields } : {}) });
  const logger: Logger = {
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
  };
  return { logger, entries };
}

describe("createReplyStream", () => {
  it("posts once, then edits no more often than the interval, ending with the full text", async () => {
    const { target, messages, calls } = memoryTarget();
    const stream = createReplyStream(target, {
      split: (t) => splitMessage(t, 4096),
      mode: "edit",
      editIntervalMs: 100,
      typingIntervalMs: 1000,
      logger: silentLogger,
    });
    const started = Date.now();
    for (let i = 0; i < 40; i++) {
      stream.onEvent({ type: "text_delta", delta: `w${i} ` });
      await sleep(10);
    }
    const elapsed = Date.now() - started;
    stream.onEvent({ type: "run_end", text: "", stopReason: "stop" });
    await stream.idle();
    expect(messages).toEqual([Array.from({ length: 40 }, (_, i) => `w${i}`).join(" ")]);
    const writes = calls.filter((c) => c.kind !== "typing");
    expect(writes[0]?.kind).toBe("post");
    // One write per 100 ms of streaming (plus the final one): a handful of writes, not 40.
    expect(writes.length).toBeGreaterThan(1);
    expect(writes.length).toBeLessThanOrEqual(Math.ceil(elapsed / 100) + 2);
    expect(writes.length).toBeLessThan(40);
    for (let i = 1; i < writes.length - 1; i++) {
      expect((writes[i]?.at ?? 0) - (writes[i - 1]?.at ?? 0)).toBeGreaterThanOrEqual(95);
    }
  });

  it("posts one message per block, shows typing while a tool runs, and splits long blocks", async () => {
    const { target, messages, calls } = memoryTarget();
    const stream = createReplyStream(target, {
      split: (t) => splitMessage(t, 50),
      mode: "blocks",
      editIntervalMs: 10,
      typingIntervalMs: 20,
      logger: silentLogger,
    });
    stream.onEvent({ type: "text_delta", delta: "Let me check." });
    stream.onEvent({ type: "tool_call", toolCallId: "1", name: "bash", args: {} });
    await sleep(70);
    stream.onEvent({
      type: "tool_result",
      toolCallId: "1",
      name: "bash",
      isError: false,
      text: "ok",
    });
    stream.onEvent({ type: "text_delta", delta: `${"a".repeat(40)}\n\n${"b".repeat(40)}` });
    stream.onEvent({ type: "run_end", text: "", stopReason: "stop" });
    await stream.idle();
    expect(messages).toEqual(["Let me check.", "a".repeat(40), "b".repeat(40)]);
    expect(calls.filter((c) => c.kind === "typing").length).toBeGreaterThanOrEqual(2);
    expect(calls.some((c) => c.kind === "edit")).toBe(false);
  });

  it("does not post a final answer the run already sent with send_message", async () => {
    const { target, messages } = memoryTarget();
    const stream = createReplyStream(target, {
      split: (t) => splitMessage(t, 4096),
      mode: "blocks",
      editIntervalMs: 10,
      typingIntervalMs: 1000,
      logger: silentLogger,
    });
    stream.onEvent({ type: "text_delta", delta: "Checking." });
    stream.onEvent({ type: "tool_call", toolCallId: "1", name: "send_message", args: {} });
    stream.onEvent({ type: "text_delta", delta: "All done" });
    stream.onEvent({ type: "run_end", text: "All done", stopReason: "stop", delivered: true });
    await stream.idle();
    // The block before the tool call is posted; the answer (posted by the tool) is not, nor is
    // "(no reply)".
    expect(messages).toEqual(["Checking."]);
  });

  it("waits out a 429 for retry_after seconds and still delivers the text", async () => {
    const { target, messages, calls } = memoryTarget({ rateLimitFirstPost: 0.2 });
    const stream = createReplyStream(target, {
      split: (t) => splitMessage(t, 4096),
      mode: "blocks",
      editIntervalMs: 10,
      typingIntervalMs: 1000,
      logger: silentLogger,
    });
    stream.onEvent({ type: "text_delta", delta: "hello" });
    stream.onEvent({ type: "run_end", text: "hello", stopReason: "stop" });
    await stream.idle();
    expect(messages).toEqual(["hello"]);
    const posts = calls.filter((c) => c.kind === "post");
    expect(posts).toHaveLength(2);
    expect((posts[1]?.at ?? 0) - (posts[0]?.at ?? 0)).toBeGreaterThanOrEqual(190);
  });

  it("reports a provider error and an abort instead of staying silent", async () => {
    const { target, messages } = memoryTarget();
    const stream = createReplyStream(target, {
      split: (t) => splitMessage(t, 4096),
      mode: "edit",
      editIntervalMs: 10,
      typingIntervalMs: 1000,
      logger: silentLogger,
    });
    stream.onEvent({ type: "run_end", text: "", stopReason: "error", errorMessage: "401 bad key" });
    await stream.idle();
    expect(messages).toEqual(["⚠️ 401 bad key"]);
  });

  it('posts nothing for a quiet heartbeat run: no text, no "(no reply)", no error note', async () => {
    for (const stopReason of ["stop", "error"] as const) {
      const { target, messages, calls } = memoryTarget();
      const stream = createReplyStream(target, {
        split: (t) => splitMessage(t, 4096),
        mode: "edit",
        editIntervalMs: 10,
        typingIntervalMs: 1000,
        logger: silentLogger,
      });
      stream.onEvent({ type: "run_end", text: "", stopReason, quiet: true });
      await stream.idle();
      await sleep(30);
      expect(messages).toEqual([]);
      expect(calls.filter((c) => c.kind === "post")).toEqual([]);
    }
  });

  it("retries a 5xx on the first post and on an edit: the whole text arrives in one message", async () => {
    const { target, messages, calls } = memoryTarget({
      failures: [
        { on: "post", error: serverError() },
        { on: "edit", error: serverError() },
      ],
    });
    const waits: number[] = [];
    const stream = createReplyStream(target, {
      split: (t) => splitMessage(t, 4096),
      mode: "edit",
      editIntervalMs: 20,
      typingIntervalMs: 1000,
      logger: silentLogger,
      sleep: async (ms) => {
        waits.push(ms);
        await sleep(Math.min(ms, 5));
      },
    });
    const words = Array.from({ length: 30 }, (_, i) => `w${i}`);
    for (const w of words) {
      stream.onEvent({ type: "text_delta", delta: `${w} ` });
      await sleep(3);
    }
    stream.onEvent({ type: "run_end", text: "", stopReason: "stop" });
    await stream.idle();
    expect(calls.filter((c) => c.failed).map((c) => c.kind)).toEqual(["post", "edit"]);
    expect(messages).toEqual([words.join(" ")]);
    // Each failure was followed by the first backoff step.
    expect(waits.filter((ms) => ms >= 1000)).toEqual([1000, 1000]);
  });

  it("continues in a new message when an edit is refused, reopening the code block the first one left open", async () => {
    const { target, messages, calls } = memoryTarget({
      failures: [{ on: "edit", error: refusal("Bad Request: message can't be edited") }],
    });
    const logged = recordingLogger();
    const stream = createReplyStream(target, {
      split: (t) => splitMessage(t, 4096),
      mode: "edit",
      editIntervalMs: 10,
      typingIntervalMs: 1000,
      logger: logged.logger,
      threadId: "telegram:42",
    });
    const lines = Array.from({ length: 12 }, (_, i) => `const v${i} = ${i};`);
    stream.onEvent({ type: "text_delta", delta: `Intro\n\n\`\`\`ts\n${lines[0]}\n` });
    await sleep(30);
    for (const line of lines.slice(1)) {
      stream.onEvent({ type: "text_delta", delta: `${line}\n` });
      await sleep(4);
    }
    stream.onEvent({ type: "text_delta", delta: "```\n\nDone." });
    stream.onEvent({ type: "run_end", text: "", stopReason: "stop" });
    await stream.idle();
    expect(calls.filter((c) => c.failed)).toHaveLength(1);
    expect(messages).toHaveLength(2);
    expect(messages[0]).toMatch(/^Intro\n\n```ts\nconst v0 = 0;/);
    expect(messages[1]).toMatch(/^```ts\n/);
    expect(messages[1]).toMatch(/```\n\nDone\.$/);
    // Every line is on screen exactly once.
    for (const line of lines) {
      expect(messages.join("\n").split(line)).toHaveLength(2);
    }
    expect(logged.entries).toContainEqual(
      expect.objectContaining({
        level: "warn",
        fields: expect.objectContaining({ threadId: "telegram:42" }),
      }),
    );
  });

  it("logs a reply it could not post as an error naming the thread, after a bounded number of tries", async () => {
    const { target, messages, calls } = memoryTarget({
      failures: Array.from({ length: 10 }, () => ({ on: "post" as const, error: serverError() })),
    });
    const logged = recordingLogger();
    const stream = createReplyStream(target, {
      split: (t) => splitMessage(t, 4096),
      mode: "blocks",
      editIntervalMs: 10,
      typingIntervalMs: 1000,
      logger: logged.logger,
      threadId: "telegram:7",
      sleep: async () => {},
    });
    stream.onEvent({ type: "text_delta", delta: "an answer that never arrives" });
    stream.onEvent({ type: "run_end", text: "", stopReason: "stop" });
    await stream.idle();
    expect(messages).toEqual([]);
    expect(calls.filter((c) => c.kind === "post")).toHaveLength(4);
    const errors = logged.entries.filter((e) => e.level === "error");
    expect(errors).toHaveLength(1);
    expect(errors[0]?.fields).toMatchObject({ threadId: "telegram:7" });
    expect(errors[0]?.message).toContain(String("an answer that never arrives".length));
  });

  it('takes Telegram\'s "message is not modified" as shown, without posting the text again', async () => {
    const { target, messages, calls } = memoryTarget({
      failures: [
        {
          on: "edit",
          error: refusal(
            "Bad Request: message is not modified: specified new message content and reply markup are exactly the same",
          ),
        },
      ],
    });
    const logged = recordingLogger();
    const stream = createReplyStream(target, {
      split: (t) => splitMessage(t, 4096),
      mode: "edit",
      editIntervalMs: 10,
      typingIntervalMs: 1000,
      logger: logged.logger,
    });
    stream.onEvent({ type: "text_delta", delta: "one" });
    await sleep(20);
    stream.onEvent({ type: "text_delta", delta: " two" });
    stream.onEvent({ type: "run_end", text: "", stopReason: "stop" });
    await stream.idle();
    expect(calls.filter((c) => c.kind === "post")).toHaveLength(1);
    expect(calls.filter((c) => c.kind === "edit")).toHaveLength(1);
    expect(messages).toHaveLength(1);
    expect(logged.entries.filter((e) => e.level !== "debug")).toEqual([]);
  });
});

describe("withRateLimitRetry", () => {
  it("gives up after the attempts and rethrows other errors at once", async () => {
    const waits: number[] = [];
    let n = 0;
    const limited = () => {
      n++;
      return Promise.reject(
        Object.assign(new Error("429"), { name: "AdapterRateLimitError", retryAfter: 3 }),
      );
    };
    await expect(
      withRateLimitRetry(limited, { attempts: 3, sleep: async (ms) => void waits.push(ms) }),
    ).rejects.toThrow("429");
    expect(n).toBe(3);
    expect(waits).toEqual([3000, 3000]);
    let m = 0;
    await expect(
      withRateLimitRetry(() => {
        m++;
        return Promise.reject(new Error("boom"));
      }),
    ).rejects.toThrow("boom");
    expect(m).toBe(1);
  });

  it("tries again after transient failures, waiting 1 s, 2 s, 4 s", async () => {
    const waits: number[] = [];
    let n = 0;
    const flaky = async () => {
      n++;
      if (n < 4) throw serverError();
      return "ok";
    };
    await expect(
      withRateLimitRetry(flaky, { sleep: async (ms) => void waits.push(ms) }),
    ).resolves.toBe("ok");
    expect(waits).toEqual([1000, 2000, 4000]);
  });
});

describe("classifySendError", () => {
  it("reads the adapters' errors: 429 waits, 5xx and network failures are transient, the rest refused", () => {
    expect(
      classifySendError(adapterError("AdapterRateLimitError", "429", { retryAfter: 3 })),
    ).toEqual({ kind: "rate-limited", retryAfterMs: 3000 });
    expect(classifySendError(serverError())).toEqual({ kind: "transient" });
    const reset = Object.assign(new TypeError("fetch failed"), {
      cause: Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }),
    });
    expect(classifySendError(reset)).toEqual({ kind: "transient" });
    expect(classifySendError(refusal("Bad Request: chat not found"))).toEqual({ kind: "refused" });
    expect(classifySendError(new Error("boom"))).toEqual({ kind: "refused" });
    // Discord's adapter wraps every HTTP error in a NetworkError around a DiscordApiError.
    const discord = (status: number, body: string) =>
      adapterError("NetworkError", `Discord API error: ${status} ${body}`, {
        originalError: Object.assign(new Error(body), { name: "DiscordApiError", status }),
      });
    expect(classifySendError(discord(503, "upstream"))).toEqual({ kind: "transient" });
    expect(classifySendError(discord(429, '{"retry_after": 2.5, "global": false}'))).toEqual({
      kind: "rate-limited",
      retryAfterMs: 2500,
    });
    expect(classifySendError(discord(400, '{"code": 50035}'))).toEqual({ kind: "refused" });
  });
});
