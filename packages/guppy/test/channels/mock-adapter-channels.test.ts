import { createMockAdapter, createTestMessage } from "@chat-adapter/tests";
import type { ChatCompletionRequest, FixtureResponse } from "@copilotkit/aimock";
import type { Adapter, AdapterPostableMessage } from "chat";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  type RunningChatChannel,
  startChatChannel,
} from "../../src/channels/bridge/start-chat-channel.js";
import { splitMessage } from "../../src/channels/format/split-message.js";
import { lastMessage, type MockLlm, requestText, startMockLlm } from "../helpers/mock-llm.js";
import { startRuntime, type TestRuntime } from "./helpers/start-runtime.js";

/** "run-bash X" → a bash tool call `echo X`; a tool result → "Tool said: <output>"; else an echo. */
function script(request: ChatCompletionRequest): FixtureResponse {
  const last = lastMessage(request);
  if (last?.role === "tool")
    return { content: `Tool said: ${String(last.content).split("\n")[0]}` };
  const text = requestText({ ...request, messages: last ? [last] : [] });
  const bash = /run-bash (\S+)/.exec(text);
  if (bash)
    return {
      toolCalls: [{ name: "bash", arguments: JSON.stringify({ command: `echo ${bash[1]}` }) }],
    };
  return { content: `You said: ${text}` };
}

function textOf(message: AdapterPostableMessage): string {
  if (typeof message === "string") return message;
  if ("markdown" in message) return message.markdown;
  if ("raw" in message) return message.raw;
  return JSON.stringify(message);
}

/** A mock adapter that records what the bridge posts, per thread, with edits applied. */
function recordingAdapter(name: string) {
  const threads = new Map<string, string[]>();
  const ids = new Map<string, { threadId: string; index: number }>();
  let next = 0;
  const adapter: Adapter = createMockAdapter(name, {
    postMessage: async (threadId: string, message: AdapterPostableMessage) => {
      const list = threads.get(threadId) ?? [];
      list.push(textOf(message));
      threads.set(threadId, list);
      const id = `m${next++}`;
      ids.set(id, { threadId, index: list.length - 1 });
      return { id, threadId, raw: {} };
    },
    editMessage: async (threadId: string, id: string, message: AdapterPostableMessage) => {
      const at = ids.get(id);
      if (at) (threads.get(at.threadId) as string[])[at.index] = textOf(message);
      return { id, threadId, raw: {} };
    },
  });
  return { adapter, posted: (threadId: string) => threads.get(threadId) ?? [] };
}

describe.each(["slack", "discord"])("%s through the Chat SDK bridge (mock adapter)", (name) => {
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

  async function start(env: Record<string, string>) {
    runtime = await startRuntime(llm, env);
    rec = recordingAdapter(name);
    channel = await startChatChannel(runtime.context, name, rec.adapter, {
      split: (t) => splitMessage(t, 2000),
      mode: "edit",
      editIntervalMs: 20,
      typingIntervalMs: 1000,
    });
  }

  /** Delivers a DM from `userId` and waits until the reply is fully posted. */
  async function send(userId: string, text: string) {
    const threadId = `${name}:D${userId}:t`;
    const message = createTestMessage(`${userId}-${Date.now()}-${Math.random()}`, text, {
      threadId,
      author: {
        userId,
        userName: `user${userId}`,
        fullName: `User ${userId}`,
        isBot: false,
        isMe: false,
      },
    });
    await channel.chat.processMessage(rec.adapter, threadId, message);
    await channel.bridge.idle();
    for (let i = 0; i < 200 && runtime.orchestrator.status(threadId).state === "running"; i++)
      await new Promise((r) => setTimeout(r, 20));
    await channel.bridge.idle();
    return rec.posted(threadId);
  }

  it("answers an allowed user through a tool call", async () => {
    await start({ GUPPY_ACCESS_POLICY: "allowlist", GUPPY_ALLOWED_USERS: "U1" });
    const posted = await send("U1", "please run-bash hello-tool");
    expect(posted.join("\n")).toContain("Tool said: hello-tool");
    expect(llm.requests().length).toBeGreaterThanOrEqual(2);
  });

  it("gives an unknown user a pairing code and spends no tokens", async () => {
    await start({});
    const before = llm.requests().length;
    const posted = await send("U9", "hello?");
    expect(posted).toHaveLength(1);
    expect(posted[0]).toMatch(
      new RegExp(`Pairing code: [A-Z2-9]{8}\\nAsk the owner.*guppy pairing approve ${name} `),
    );
    expect(llm.requests().length).toBe(before);
  });

  it("keeps two users' conversations apart", async () => {
    await start({ GUPPY_ACCESS_POLICY: "open" });
    await send("UA", "my secret is apricot");
    await send("UB", "my secret is blueberry");
    const before = llm.requests().length;
    await send("UA", "what is my secret?");
    const request = llm.requests()[before] as ChatCompletionRequest;
    const seen = requestText(request);
    expect(seen).toContain("apricot");
    expect(seen).not.toContain("blueberry");
  });

  it("answers /status and /help without the LLM", async () => {
    await start({ GUPPY_ACCESS_POLICY: "open" });
    const before = llm.requests().length;
    const status = await send("UC", "/status");
    expect(status[0]).toContain("Model: openai/mock-gpt");
    expect(status[0]).toMatch(/State: \w+, 0 queued/);
    const help = await send("UC", "/help");
    expect(help[1]).toContain("/steer");
    expect(llm.requests().length).toBe(before);
  });
});
