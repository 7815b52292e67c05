import type { Logger, ThreadHandle } from "@guppy/core";
import type { Thread } from "chat";
import { acknowledge } from "./acknowledge.js";
import { chatThreadHistory } from "./channel-history.js";
import { withRateLimitRetry } from "./rate-limit-retry.js";
import { createReplyStream, type ReplyStreamOptions } from "./reply-stream.js";

export type ReplySettings = Omit<ReplyStreamOptions, "logger" | "sleep" | "threadId">;

/** Posts Markdown as one or more messages, split to the platform's limit. */
export async function postSplit(
  thread: Thread,
  markdown: string,
  reply: ReplySettings,
): Promise<void> {
  for (const part of reply.split(markdown)) {
    await withRateLimitRetry(() => thread.post({ markdown: part }));
  }
}

export interface ChatThreadHandle extends ThreadHandle {
  /** Resolves once the reply posts under way are done (at once while nothing is posting). */
  idle(): Promise<void>;
  /** Resolves when the prompt's run has ended (its last posts may still be under way). */
  ended: Promise<void>;
}

/**
 * The ThreadHandle a Chat SDK thread gives the orchestrator: run events stream into the thread
 * (one reply stream per prompt), notices and uploaded files are posted to it.
 */
export function createChatThreadHandle(
  threadId: string,
  thread: Thread,
  reply: ReplySettings,
  logger: Logger,
  /** Who sent the prompt: the replies meant for them alone (busy) are shown to them alone. */
  senderId?: string,
): ChatThreadHandle {
  let markEnded = () => {};
  const ended = new Promise<void>((resolve) => {
    markEnded = resolve;
  });
  const stream = createReplyStream(
    {
      post: async (markdown) => {
        const sent = await thread.post({ markdown });
        return {
          edit: async (text) => {
            await sent.edit({ markdown: text });
          },
        };
      },
      startTyping: (status) => thread.startTyping(status),
    },
    { ...reply, logger, threadId },
  );
  return {
    threadId,
    onEvent: (event) => {
      stream.onEvent(event);
      if (event.type === "run_end") markEnded();
    },
    idle: () => stream.idle(),
    ended,
    notice: async (text) => {
      try {
        await postSplit(thread, text, reply);
      } catch (error) {
        logger.warn("channel: could not post a notice", { threadId, error: String(error) });
      }
    },
    acknowledge: async (text) => {
      try {
        await acknowledge(thread, senderId, text, (t) => postSplit(thread, t, reply));
      } catch (error) {
        logger.warn("channel: could not post a notice", { threadId, error: String(error) });
      }
    },
    // A message from guppy outside the reply (send_message): posted as it is, split to fit.
    post: (text) => postSplit(thread, text, reply),
    // What `search_channel` reads beside guppy's logs: the thread's and its channel's messages.
    history: chatThreadHistory(thread),
    uploadFile: async (file, comment) => {
      await withRateLimitRetry(() => thread.post({ markdown: comment ?? "", files: [file] }));
    },
  };
}
