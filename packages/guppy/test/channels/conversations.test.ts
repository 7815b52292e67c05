import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createTestMessage } from "@chat-adapter/tests";
import type { ChatCompletionRequest } from "@copilotkit/aimock";
import type { MessageData } from "chat";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { splitMessage } from "../../src/channels/bridge/split-message.js";
import {
  type RunningChatChannel,
  startChatChannel,
} from "../../src/channels/bridge/start-chat-channel.js";
import { lastMessage, type MockLlm, requestText, startMockLlm } from "../helpers/mock-llm.js";
import { recordingAdapter } from "./helpers/recording-adapter.js";
import { startRuntime, type TestRuntime } from "./helpers/start-runtime.js";

/**
 * Conversations as people have them (issue 36, items 1–3) through Chat SDK's mock adapters, the
 * real bridge, orchestrator and runners, and an LLM mock: threads followed after a mention,
 * group messages seen (logged, backfilled, never run), per-user contexts in a group.
 */
describe.each(["slack", "discord"])("%s conversations (mock adapter)", (name) => {
  let llm: MockLlm;
  const cleanups: Array<() => Promise<void>> = [];
  let runtime: TestRuntime;
  let channel: RunningChatChannel;
  let rec: ReturnType<typeof recordingAdapter>;

  beforeAll(async () => {
    llm = await startMockLlm((request: ChatCompletionRequest) => {
      const last = lastMessage(request);
      const text = requestText({ ...request, messages: last ? [last] : [] });
      return { content: `You said: ${text}` };
    });
  });
  afterAll(async () => {
    await llm.stop();
  });
  afterEach(async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn();
  });

  /** guppy serve's chat channel on `home` (a new one, or a restart on an existing one). */
  async function start(env: Record<string, string>, home?: string) {
    runtime = await startRuntime(llm, env, home);
    rec = recordingAdapter(name);
    channel = await startChatChannel(runtime.context, name, rec.adapter, {
      split: (t) => splitMessage(t, 2000),
      mode: "edit",
      editIntervalMs: 20,
      typingIntervalMs: 1000,
    });
    const [r, c] = [runtime, channel];
    cleanups.push(async () => {
      await c.chat.shutdown();
      await r.stop();
    });
    return runtime;
  }

  let seq = 0;
  /** Delivers a message in `threadId` and waits until the thread is idle and its replies posted. */
  async function say(
    threadId: string,
    userId: string,
    text: string,
    extra: Partial<MessageData> = {},
  ) {
    const id = `${userId}-${++seq}`;
    const message = createTestMessage(id, text, {
      threadId,
      author: { userId, userName: userId, fullName: `User ${userId}`, isBot: false, isMe: false },
      isMention: false,
      ...extra,
    });
    await channel.chat.processMessage(rec.adapter, threadId, message);
    await settle(threadId);
    return id;
  }

  async function settle(threadId: string) {
    await channel.bridge.idle();
    const busy = () => {
      const status = runtime.orchestrator.status(threadId);
      return status.state === "running" || status.state === "waiting";
    };
    for (let i = 0; i < 500 && busy(); i++) await new Promise((r) => setTimeout(r, 20));
    await channel.bridge.idle();
  }

  const answers = (threadId: string) =>
    rec.posted(threadId).filter((p) => p.startsWith("You said"));

  describe("threads are followed", () => {
    it("answers a thread without a second mention after the first, and not after /new", async () => {
      await start({ GUPPY_ACCESS_POLICY: "allowlist", GUPPY_ALLOWED_USERS: "U1" });
      const thread = `${name}:C7:t1`;
      await say(thread, "U1", "hello there", { isMention: true });
      expect(answers(thread)).toHaveLength(1);
      const before = llm.requests().length;
      await say(thread, "U1", "and a follow-up without naming you");
      expect(answers(thread)).toHaveLength(2);
      expect(answers(thread)[1]).toContain("a follow-up without naming you");
      expect(llm.requests().length).toBe(before + 1);

      await say(thread, "U1", "/new");
      const afterNew = llm.requests().length;
      await say(thread, "U1", "anyone there?");
      expect(answers(thread)).toHaveLength(2);
      expect(llm.requests().length).toBe(afterNew);
      // A mention follows it again.
      await say(thread, "U1", "back again", { isMention: true });
      await say(thread, "U1", "still following?");
      expect(answers(thread)).toHaveLength(4);
    });

    it("a stranger's mention does not make guppy follow the thread", async () => {
      await start({ GUPPY_ACCESS_POLICY: "allowlist", GUPPY_ALLOWED_USERS: "U1" });
      const thread = `${name}:C8:t1`;
      const before = llm.requests().length;
      await say(thread, "U666", "hey bot", { isMention: true });
      await say(thread, "U1", "just talking to people here");
      expect(rec.posted(thread)).toEqual([]);
      expect(llm.requests().length).toBe(before);
    });

    it("still follows the thread after a restart", async () => {
      const env = { GUPPY_ACCESS_POLICY: "allowlist", GUPPY_ALLOWED_USERS: "U1" };
      const first = await start(env);
      const thread = `${name}:C9:t1`;
      await say(thread, "U1", "remember this thread", { isMention: true });
      expect(answers(thread)).toHaveLength(1);
      const saved = JSON.parse(readFileSync(join(first.home, "subscriptions.json"), "utf8"));
      expect(saved.map((f: { threadId: string }) => f.threadId)).toEqual([thread]);
      // guppy serve stops (its state adapter forgets) and starts again on the same home.
      await channel.chat.shutdown();
      await first.orchestrator.shutdown(1000);
      await start(env, first.home);
      await say(thread, "U1", "are you still here?");
      expect(answers(thread)).toHaveLength(1);
      expect(answers(thread)[0]).toContain("are you still here?");
    });
  });
});
