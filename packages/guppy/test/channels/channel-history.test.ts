import { createMemoryState } from "@chat-adapter/state-memory";
import { createMockAdapter, createTestMessage } from "@chat-adapter/tests";
import type { PlatformMessage } from "@guppy/core";
import { type Adapter, Chat, type Message } from "chat";
import { afterEach, describe, expect, it } from "vitest";
import { chatThreadHistory } from "../../src/channels/bridge/channel-history.js";

// A Chat SDK thread's history as search_channel reads it, over a mock adapter: newest first
// across the channel's list and its threads, a thread's root once, a thread that cannot be read
// passed over, a channel that cannot be read an error (the search says why).

const HERE = "slack:C1:t1";
const OTHER = "slack:C1:t2";
const msg = (id: string, threadId: string, hour: number, isMe = false): Message =>
  createTestMessage(id, `text ${id}`, {
    threadId,
    author: { userId: `U${id}`, userName: `user-${id}`, fullName: "", isBot: isMe, isMe },
    metadata: { dateSent: new Date(Date.UTC(2026, 10, 27, hour)), edited: false },
  });
const chrono = (messages: Message[]) => ({
  messages: [...messages].sort((a, b) => +a.metadata.dateSent - +b.metadata.dateSent),
});

let chat: Chat | undefined;
afterEach(async () => {
  await chat?.shutdown();
  chat = undefined;
});

async function threadOf(overrides: Partial<Adapter>) {
  const adapter = createMockAdapter("slack", overrides);
  chat = new Chat({
    userName: "guppy",
    adapters: { slack: adapter },
    state: createMemoryState(),
    logger: "silent",
  });
  await chat.initialize();
  return chat.thread(HERE);
}

async function collect(messages: AsyncIterable<PlatformMessage>): Promise<string[]> {
  const ids: string[] = [];
  for await (const m of messages) ids.push(`${m.id}@${m.date.getUTCHours()} ${m.author}`);
  return ids;
}

describe("chatThreadHistory", () => {
  const root = msg("r2", OTHER, 3);
  const byThread: Record<string, Message[]> = {
    [HERE]: [msg("h1", HERE, 2), msg("h2", HERE, 6, true)],
    [OTHER]: [root, msg("o1", OTHER, 5)],
  };

  it("reads the thread's messages newest first for scope thread", async () => {
    const thread = await threadOf({
      fetchMessages: async (id: string) => chrono(byThread[id] ?? []),
    });
    expect(await collect(chatThreadHistory(thread)("thread"))).toEqual([
      "h2@6 user-h2",
      "h1@2 user-h1",
    ]);
  });

  it("merges the channel's list with its threads' messages, newest first, each once", async () => {
    const thread = await threadOf({
      fetchMessages: async (id: string) => chrono(byThread[id] ?? []),
      fetchChannelMessages: async () => chrono([root, msg("c1", "slack:C1:c1", 4)]),
      listThreads: async () => ({
        threads: [OTHER, HERE].map((id) => ({ id, rootMessage: byThread[id]?.[0] as Message })),
      }),
    });
    expect(await collect(chatThreadHistory(thread)("channel"))).toEqual([
      "h2@6 user-h2",
      "o1@5 user-o1",
      "c1@4 user-c1",
      "r2@3 user-r2",
      "h1@2 user-h1",
    ]);
  });

  it("passes over a thread it cannot read, and fails when the channel cannot be read", async () => {
    const listThreads = async () => ({
      threads: [OTHER, HERE].map((id) => ({ id, rootMessage: byThread[id]?.[0] as Message })),
    });
    const thread = await threadOf({
      fetchMessages: async (id: string) => {
        if (id === OTHER) throw new Error("thread_not_found");
        return chrono(byThread[id] ?? []);
      },
      fetchChannelMessages: async () => chrono([msg("c1", "slack:C1:c1", 4)]),
      listThreads,
    });
    expect(await collect(chatThreadHistory(thread)("channel"))).toEqual([
      "h2@6 user-h2",
      "c1@4 user-c1",
      "h1@2 user-h1",
    ]);
    const refused = await threadOf({
      fetchMessages: async (id: string) => chrono(byThread[id] ?? []),
      fetchChannelMessages: async () => {
        throw new Error("missing_scope");
      },
      listThreads,
    });
    await expect(collect(chatThreadHistory(refused)("channel"))).rejects.toThrow("missing_scope");
  });
});
