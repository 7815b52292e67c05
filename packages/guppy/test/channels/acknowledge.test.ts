import { createMockAdapter, createTestMessage } from "@chat-adapter/tests";
import type { ChatCompletionRequest, FixtureResponse } from "@copilotkit/aimock";
import type { Adapter, AdapterPostableMessage } from "chat";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { splitMessage } from "../../src/channels/bridge/split-message.js";
import {
  type RunningChatChannel,
  startChatChannel,
} from "../../src/channels/bridge/start-chat-channel.js";
import { lastMessage, type MockLlm, requestText, startMockLlm } from "../helpers/mock-llm.js";
import { startRuntime, type TestRuntime } from "../helpers/test-runtime.js";

/** "long-task" → bash `sleep 20`; a tool result → "Tool said: …"; else "You said: …". */
function script(request: ChatCompletionRequest): FixtureResponse {
  const last = lastMessage(request);
  if (last?.role === "tool") return { content: "Tool said: done" };
  const text = requestText({ ...request, messages: last ? [last] : [] });
  if (text.includes("long-task"))
    return { toolCalls: [{ name: "bash", arguments: JSON.stringify({ command: "sleep 20" }) }] };
  return { content: `You said: ${text}` };
}

function textOf(message: AdapterPostableMessage): string {
  if (typeof message === "string") return message;
  if ("markdown" in message) return message.markdown;
  if ("raw" in message) return message.raw;
  return JSON.stringify(message);
}

/**
 * A mock adapter recording posts, typing statuses and — when `ephemeral` (Slack has them in the
 * Chat SDK, Discord not) — ephemeral messages, each with the user it was for.
 */
function recordingAdapter(name: string, ephemeral: boolean) {
  const posts: Array<{ threadId: string; text: string }> = [];
  const ephemerals: Array<{ threadId: string; userId: string; text: string }> = [];
  const typing: Array<string | undefined> = [];
  let next = 0;
  const adapter: Adapter = createMockAdapter(name, {
    postMessage: async (threadId: string, message: AdapterPostableMessage) => {
      posts.push({ threadId, text: textOf(message) });
      return { id: `m${next++}`, threadId, raw: {} };
    },
    editMessage: async (threadId: string, id: string, message: AdapterPostableMessage) => {
      posts.push({ threadId, text: textOf(message) });
      return { id, threadId, raw: {} };
    },
    startTyping: async (_threadId: string, status?: string) => {
      typing.push(status);
    },
    ...(ephemeral
      ? {
          postEphemeral: async (
            threadId: string,
            userId: string,
            message: AdapterPostableMessage,
          ) => {
            ephemerals.push({ threadId, userId, text: textOf(message) });
            return { id: `e${next++}`, threadId, raw: {}, usedFallback: false };
          },
        }
      : {}),
  });
  return { adapter, posts, ephemerals, typing };
}

const until = async (probe: () => boolean, what: string, ms = 15_000) => {
  const t0 = Date.now();
  while (!probe()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe.each([
  ["slack", true],
  ["discord", false],
] as const)("acknowledgements and typing on %s (mock adapter)", (name, ephemeral) => {
  let llm: MockLlm;
  let runtime: TestRuntime;
  let channel: RunningChatChannel;
  let rec: ReturnType<typeof recordingAdapter>;

  beforeAll(async () => {
    llm = await startMockLlm((request) => script(request));
  });
  afterAll(async () => {
    await llm.stop();
  });
  afterEach(async () => {
    await channel?.chat.shutdown();
    await runtime?.stop();
  });

  const thread = `${name}:C7:t1`;
  /** Delivers a message from `userId` in the group thread, without waiting for any run. */
  const deliver = async (userId: string, text: string) => {
    const message = createTestMessage(`${userId}-${Date.now()}-${Math.random()}`, text, {
      threadId: thread,
      isMention: true,
      author: {
        userId,
        userName: `user${userId}`,
        fullName: `User ${userId}`,
        isBot: false,
        isMe: false,
      },
    });
    await channel.chat.processMessage(rec.adapter, thread, message);
    await channel.bridge.idle();
  };

  it("tells only the sender that /steer and /stop were taken (where the platform can), names the running tool in the typing status, and /status says when the thread was last active", async () => {
    runtime = await startRuntime(llm, {
      GUPPY_ACCESS_POLICY: "open",
      // UA is the owner (bash is an owner's tool: a guest's long-task would end at once).
      GUPPY_ALLOWED_USERS: "UA",
      GUPPY_SANDBOX: "host",
    });
    rec = recordingAdapter(name, ephemeral);
    channel = await startChatChannel(runtime.context, name, rec.adapter, {
      split: (t) => splitMessage(t, 2000),
      mode: "edit",
      editIntervalMs: 20,
      typingIntervalMs: 1000,
    });
    await deliver("UA", `@${name}-bot long-task`);
    await until(() => runtime.orchestrator.status(thread).state === "running", "the run");
    await until(() => rec.typing.includes("Running bash…"), "the typing status");

    await deliver("UA", "/steer go left instead");
    await deliver("UA", "/stop");
    const acks = ["Steering message sent.", "Stopping."];
    if (ephemeral) {
      await until(() => rec.ephemerals.length >= 2, "the acknowledgements");
      expect(rec.ephemerals).toEqual(
        acks.map((text) => ({ threadId: thread, userId: "UA", text })),
      );
      // Not posted for everyone in the thread.
      for (const text of acks) expect(rec.posts.map((p) => p.text)).not.toContain(text);
    } else {
      await until(
        () => acks.every((text) => rec.posts.some((p) => p.text === text)),
        "the acknowledgements",
      );
      expect(rec.ephemerals).toEqual([]);
    }
    await until(() => runtime.orchestrator.status(thread).state !== "running", "the stop");

    // Nothing runs now: "nothing to steer" is for the sender too.
    await deliver("UA", "/steer and now?");
    const nothing = "Nothing is running in this thread, so there is nothing to steer.";
    if (ephemeral) await until(() => rec.ephemerals.some((e) => e.text === nothing), "the notice");
    else await until(() => rec.posts.some((p) => p.text === nothing), "the notice");

    await deliver("UA", "/status");
    await until(() => rec.posts.some((p) => p.text.includes("Last activity:")), "/status");
    const status = rec.posts.find((p) => p.text.includes("Last activity:"))?.text ?? "";
    expect(status).toMatch(/Last activity: \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC \(just now\)/);
  }, 60_000);

  it("tells only the sender that their message was not queued (busy)", async () => {
    runtime = await startRuntime(llm, {
      GUPPY_ACCESS_POLICY: "open",
      GUPPY_ALLOWED_USERS: "UA",
      GUPPY_SANDBOX: "host",
      GUPPY_QUEUE_DEPTH: "1",
    });
    rec = recordingAdapter(name, ephemeral);
    channel = await startChatChannel(runtime.context, name, rec.adapter, {
      split: (t) => splitMessage(t, 2000),
      mode: "edit",
      editIntervalMs: 20,
      typingIntervalMs: 1000,
    });
    await deliver("UA", `@${name}-bot long-task`);
    await until(() => runtime.orchestrator.status(thread).state === "running", "the run");
    await deliver("UB", `@${name}-bot one more`);
    await deliver("UC", `@${name}-bot and another`);
    const busy = /already has 1 message waiting/;
    if (ephemeral) {
      await until(() => rec.ephemerals.some((e) => busy.test(e.text)), "the busy reply");
      expect(rec.ephemerals.filter((e) => busy.test(e.text)).map((e) => e.userId)).toEqual(["UC"]);
      expect(rec.posts.some((p) => busy.test(p.text))).toBe(false);
    } else {
      await until(() => rec.posts.some((p) => busy.test(p.text)), "the busy reply");
    }
    runtime.orchestrator.send(thread, { type: "abort" });
  }, 60_000);
});
