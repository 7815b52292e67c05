import { silentLogger } from "@guppy/core";
import { describe, expect, it } from "vitest";
import { withRateLimitRetry } from "../../src/channels/bridge/rate-limit-retry.js";
import { createReplyStream, type ReplyTarget } from "../../src/channels/bridge/reply-stream.js";
import { splitMessage } from "../../src/channels/format/split-message.js";

/** A chat thread in memory: messages with their edit history and timestamps. */
function memoryTarget(options: { rateLimitFirstPost?: number } = {}) {
  const messages: string[] = [];
  const calls: Array<{ kind: "post" | "edit" | "typing"; at: number }> = [];
  let limited = options.rateLimitFirstPost;
  const target: ReplyTarget = {
    async post(markdown) {
      calls.push({ kind: "post", at: Date.now() });
      if (limited !== undefined) {
        const retryAfter = limited;
        limited = undefined;
        throw Object.assign(new Error("Rate limited by telegram"), {
          name: "AdapterRateLimitError",
          retryAfter,
        });
      }
      const index = messages.push(markdown) - 1;
      return {
        edit: async (text) => {
          calls.push({ kind: "edit", at: Date.now() });
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
});
