import { createMockAdapter } from "@chat-adapter/tests";
import type { Adapter, AdapterPostableMessage, FetchOptions, FetchResult, Message } from "chat";

function textOf(message: AdapterPostableMessage): string {
  if (typeof message === "string") return message;
  if ("markdown" in message) return message.markdown;
  if ("raw" in message) return message.raw;
  return JSON.stringify(message);
}

/**
 * A Chat SDK mock adapter that records what the bridge posts, per thread, with edits applied, and
 * lists a thread's platform history (`history`: what Slack's or Discord's message iterator
 * would return, oldest first) through `fetchMessages`.
 */
export function recordingAdapter(name: string) {
  const threads = new Map<string, string[]>();
  const ids = new Map<string, { threadId: string; index: number }>();
  const history = new Map<string, Message[]>();
  const fetches: string[] = [];
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
    postChannelMessage: async (channelId: string, message: AdapterPostableMessage) => {
      const list = threads.get(channelId) ?? [];
      list.push(textOf(message));
      threads.set(channelId, list);
      return { id: `m${next++}`, threadId: channelId, raw: {} };
    },
    editMessage: async (threadId: string, id: string, message: AdapterPostableMessage) => {
      const at = ids.get(id);
      if (at) (threads.get(at.threadId) as string[])[at.index] = textOf(message);
      return { id, threadId, raw: {} };
    },
    fetchMessages: async (threadId: string, options: FetchOptions = {}): Promise<FetchResult> => {
      fetches.push(threadId);
      const all = history.get(threadId) ?? [];
      const limit = options.limit ?? 100;
      return { messages: all.slice(-limit) };
    },
  });
  return {
    adapter,
    posted: (threadId: string) => threads.get(threadId) ?? [],
    /** Sets what the platform lists for `threadId` (oldest first). */
    setHistory: (threadId: string, messages: Message[]) => history.set(threadId, messages),
    /** The threads whose history was asked for, in order. */
    fetches: () => [...fetches],
  };
}
