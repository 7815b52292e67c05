import type { PlatformHistory, PlatformMessage } from "@guppy/core";
import type { Message, Thread } from "chat";

// A Chat SDK thread's history as `search_channel` reads it (core's PlatformHistory): the thread's
// messages, or its channel's — the top-level messages and those of its most recently active
// threads (Slack and Discord keep replies out of the channel's list) — newest first, fetched a
// page at a time only as the search reads on.

/** Threads of a channel whose replies a channel search reads (a request or more each). */
const CHANNEL_THREADS = 10;

/** The platform's history of `thread` and its channel, newest first. */
export function chatThreadHistory(thread: Thread): PlatformHistory {
  return (scope, signal) =>
    scope === "thread"
      ? toPlatform(thread.messages, thread.id, signal)
      : channelHistory(thread, signal);
}

async function* channelHistory(
  thread: Thread,
  signal?: AbortSignal,
): AsyncGenerator<PlatformMessage> {
  const channel = thread.channel;
  const sources: AsyncIterable<PlatformMessage>[] = [
    toPlatform(channel.messages, thread.id, signal),
  ];
  try {
    for await (const summary of channel.threads()) {
      if (signal?.aborted || sources.length > CHANNEL_THREADS) break;
      sources.push(quiet(toPlatform(threadMessages(thread, summary.id), summary.id, signal)));
    }
  } catch {
    // The list of threads is extra: a platform that cannot give it still has its channel's list.
  }
  yield* mergeNewestFirst(sources);
}

/**
 * A thread's messages, ending quietly where they cannot be read (the thread was deleted): the
 * channel's own list, read with the same rights, reports a platform that refuses.
 */
async function* quiet(messages: AsyncIterable<PlatformMessage>): AsyncGenerator<PlatformMessage> {
  try {
    yield* messages;
  } catch {
    // Its messages so far were given.
  }
}

/** The messages of the channel's thread `threadId`, newest first (as `Thread.messages` pages). */
async function* threadMessages(thread: Thread, threadId: string): AsyncGenerator<Message> {
  let cursor: string | undefined;
  while (true) {
    const page = await thread.adapter.fetchMessages(threadId, {
      direction: "backward",
      ...(cursor ? { cursor } : {}),
    });
    for (let i = page.messages.length - 1; i >= 0; i--) {
      const message = page.messages[i];
      if (message) yield message;
    }
    if (!page.nextCursor || page.messages.length === 0) return;
    cursor = page.nextCursor;
  }
}

async function* toPlatform(
  messages: AsyncIterable<Message>,
  fallbackThreadId: string,
  signal?: AbortSignal,
): AsyncGenerator<PlatformMessage> {
  for await (const message of messages) {
    if (signal?.aborted) return;
    yield {
      id: message.id,
      threadId: message.threadId || fallbackThreadId,
      date: message.metadata.dateSent,
      author: message.author.userName || message.author.fullName || message.author.userId,
      text: message.text,
      isMe: message.author.isMe,
    };
  }
}

/**
 * Newest-first streams merged into one newest-first stream, a message in several (a thread's root
 * is in the channel's list and the thread's) given once.
 */
async function* mergeNewestFirst(
  sources: AsyncIterable<PlatformMessage>[],
): AsyncGenerator<PlatformMessage> {
  const iterators = sources.map((source) => source[Symbol.asyncIterator]());
  const heads = await Promise.all(iterators.map((it) => it.next()));
  const seen = new Set<string>();
  try {
    while (true) {
      let best = -1;
      for (let i = 0; i < heads.length; i++) {
        const head = heads[i];
        if (!head || head.done) continue;
        const bestHead = heads[best];
        if (best === -1 || (bestHead && !bestHead.done && head.value.date > bestHead.value.date)) {
          best = i;
        }
      }
      const head = heads[best];
      if (best === -1 || !head || head.done) return;
      if (!seen.has(head.value.id)) {
        seen.add(head.value.id);
        yield head.value;
      }
      heads[best] = await (iterators[best] as AsyncIterator<PlatformMessage>).next();
    }
  } finally {
    await Promise.allSettled(iterators.map((it) => it.return?.()));
  }
}
