import { createMockAdapter, createTestMessage } from "@chat-adapter/tests";
import type { ChatCompletionRequest, FixtureResponse } from "@copilotkit/aimock";
import {
  createRedactor,
  loadConfig,
  type RuntimeOrchestrator,
  resolveModel,
  silentLogger,
} from "@guppy/core";
import { resolveSandbox } from "@guppy/core/sandbox";
import type { Adapter, FetchOptions, Message } from "chat";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { splitMessage } from "../../src/channels/bridge/split-message.js";
import {
  type RunningChatChannel,
  startChatChannel,
} from "../../src/channels/bridge/start-chat-channel.js";
import { guppySettings } from "../../src/channels/registry.js";
import { createRuntime } from "../../src/gateway/create-runtime.js";
import { lastMessage, type MockLlm, requestText, startMockLlm } from "../helpers/mock-llm.js";
import { tempHome } from "../helpers/run-cli.js";

// search_channel in a Slack channel through the Chat SDK bridge, with the runtime `guppy serve`
// makes: guppy's log of an earlier thread and the platform's history (the channel's
// top-level messages and its threads' replies, from a Chat SDK mock adapter) in one answer.

/** "search-for Q" → a search_channel call; a tool result → "Found: <result>". */
function script(request: ChatCompletionRequest): FixtureResponse {
  const last = lastMessage(request);
  if (last?.role === "tool") return { content: `Found: ${String(last.content)}` };
  const query = /search-for (.+)$/.exec(requestText({ ...request, messages: last ? [last] : [] }));
  if (query) {
    return {
      toolCalls: [{ name: "search_channel", arguments: JSON.stringify({ query: query[1] }) }],
    };
  }
  return { content: "ok" };
}

const CHANNEL = "slack:C7";
const HERE = `${CHANNEL}:t1`;
const SIBLING = `${CHANNEL}:t2`;
const author = (userId: string, isMe = false) => ({
  userId,
  userName: userId.toLowerCase(),
  fullName: userId,
  isBot: isMe,
  isMe,
});
const message = (id: string, threadId: string, day: string, text: string, who = author("UX")) =>
  createTestMessage(id, text, {
    threadId,
    author: who,
    metadata: { dateSent: new Date(`2026-11-${day}T10:00:00.000Z`), edited: false },
  });

/** A page of messages as an adapter gives it: chronological. */
const page = (messages: Message[]) => ({
  messages: [...messages].sort(
    (a, b) => a.metadata.dateSent.getTime() - b.metadata.dateSent.getTime(),
  ),
});

describe("search_channel through the Chat SDK bridge (mock Slack adapter)", () => {
  let llm: MockLlm;
  let home: ReturnType<typeof tempHome>;
  let orchestrator: RuntimeOrchestrator;
  let channel: RunningChatChannel;

  beforeAll(async () => {
    llm = await startMockLlm((request) => script(request));
  });
  afterAll(async () => {
    await llm.stop();
  });
  afterEach(async () => {
    await channel?.chat.shutdown();
    await orchestrator?.shutdown(1000);
    home?.cleanup();
  });

  /** The gateway's runtime on a new home, the mock Slack channel started; `ask` sends a prompt. */
  async function start() {
    home = tempHome();
    const env = {
      ...llm.env("openai-completions"),
      GUPPY_HOME: home.home,
      GUPPY_SANDBOX: "host",
      GUPPY_TIMEZONE: "UTC",
      GUPPY_ACCESS_POLICY: "open",
      // An owner: a guest's search would reach this thread only.
      GUPPY_ALLOWED_USERS: "UB",
    };
    const config = loadConfig({ env, home: home.home, settings: guppySettings });
    const resolved = await resolveModel(config, { env });
    // guppy serve's runtime (its thread runners: search_channel with the platform's history).
    const runtime = createRuntime(config, {
      scope: { type: "gateway" },
      resolved,
      logger: silentLogger,
      redactor: createRedactor([]),
      sandbox: resolveSandbox(config, { env }).sandbox,
      events: false,
      heartbeat: false,
    });
    const { store } = runtime;
    orchestrator = runtime.orchestrator;
    // An earlier thread of the channel that guppy logged (the platform no longer lists it).
    store.appendLog(`${CHANNEL}:t0`, {
      date: "2026-11-20T10:00:00.000Z",
      messageId: "old-1",
      userId: "UA",
      userName: "alice",
      text: "The budget is 10k for now.",
      isBot: false,
    });
    await runtime.start();

    const prompt = message("ask-1", HERE, "27", "search-for budget", author("UB"));
    const platform: Record<string, Message[]> = {
      // The channel's top-level messages.
      [CHANNEL]: [
        message("p1", `${CHANNEL}:p1`, "25", "Budget approved by finance.", author("UD")),
        message("p0", `${CHANNEL}:p0`, "26", "lunch anyone?", author("UD")),
      ],
      // A thread guppy never took part in, and this one: its prompt and guppy's own post.
      [SIBLING]: [message("p2", SIBLING, "24", "A budget question from erin.", author("UE"))],
      [HERE]: [
        prompt,
        message("p3", HERE, "26", "my old budget reply", author("UG", true)),
        message("p4", HERE, "23", "Said before guppy was added: budget?", author("UX")),
      ],
    };
    const fetched: string[] = [];
    const adapter: Adapter = createMockAdapter("slack", {
      postMessage: async (threadId: string) => ({ id: `m-${Math.random()}`, threadId, raw: {} }),
      editMessage: async (threadId: string, id: string) => ({ id, threadId, raw: {} }),
      fetchMessages: async (threadId: string, _options?: FetchOptions) => {
        fetched.push(threadId);
        return page(platform[threadId] ?? []);
      },
      fetchChannelMessages: async (channelId: string) => {
        fetched.push(channelId);
        return page(platform[channelId] ?? []);
      },
      listThreads: async () => ({
        threads: [SIBLING, HERE].map((id) => ({
          id,
          rootMessage: (platform[id] as Message[])[0] as Message,
        })),
      }),
    });
    channel = await startChatChannel(
      { orchestrator, config, store, logger: silentLogger },
      "slack",
      adapter,
      {
        split: (t) => splitMessage(t, 4000),
        mode: "edit",
        editIntervalMs: 20,
        typingIntervalMs: 1000,
      },
    );

    /** Sends "search-for budget" from `userId` to this thread; the search's tool result. */
    const ask = async (userId: string): Promise<string> => {
      const before = llm.requests().length;
      await channel.chat.processMessage(
        adapter,
        HERE,
        createTestMessage("ask-1", "search-for budget", {
          threadId: HERE,
          author: author(userId),
          isMention: true,
        }),
      );
      await channel.bridge.idle();
      // Until this prompt's two requests are recorded and its run is over.
      for (let i = 0; i < 300 && llm.requests().length < before + 2; i++) {
        await new Promise((r) => setTimeout(r, 20));
      }
      for (let i = 0; i < 300 && orchestrator.status(HERE).state !== "idle"; i++) {
        await new Promise((r) => setTimeout(r, 20));
      }
      const second = llm.requests()[before + 1] as ChatCompletionRequest;
      expect(second).toBeDefined();
      return String(lastMessage(second)?.content);
    };
    return { fetched, ask };
  }

  it("finds guppy's logs and the platform's messages of the channel, newest first, each once", async () => {
    const { fetched, ask } = await start();
    const result = await ask("UB");
    const heads = result.split("\n").filter((line) => /^\d+\. /.test(line));
    // The prompt under way is left out (its log line, and the platform's copy by its id), and
    // guppy's own post in this logged thread (its log has it); the rest merged by time.
    expect(heads).toEqual([
      "1. Wed 2026-11-25 10:00 · ud · slack:C7:p1",
      "2. Tue 2026-11-24 10:00 · ue · slack:C7:t2",
      "3. Mon 2026-11-23 10:00 · ux · slack:C7:t1 (this conversation)",
      "4. Fri 2026-11-20 10:00 · alice · slack:C7:t0",
    ]);
    expect(result).toContain('<untrusted-content source="search_channel: budget">');
    expect(result).not.toContain("my old budget reply");
    expect(fetched).toEqual(expect.arrayContaining([CHANNEL, SIBLING, HERE]));
  });

  it("keeps a guest's search, logs and platform alike, in its own thread", async () => {
    const { fetched, ask } = await start();
    const result = await ask("UQ");
    const heads = result.split("\n").filter((line) => /^\d+\. /.test(line));
    expect(heads).toEqual(["1. Mon 2026-11-23 10:00 · ux · slack:C7:t1 (this conversation)"]);
    expect(result).toContain("a guest's search reaches this conversation only");
    // Its own thread only (the bridge also reads that thread's history once, for the group's
    // backfill: the same thread).
    expect([...new Set(fetched)]).toEqual([HERE]);
  });
});
