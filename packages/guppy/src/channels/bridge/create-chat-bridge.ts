import type { ChannelLink } from "@guppy/core";
import type { Chat } from "chat";
import { handleMessage, handleSlashCommand } from "./bridge-messages.js";
import { BridgeState, type ChatBridge, type ChatBridgeOptions } from "./bridge-state.js";
import { createChatThreadHandle } from "./chat-thread-handle.js";

export type { ChatBridge, ChatBridgeOptions } from "./bridge-state.js";

/**
 * Wires a Chat SDK instance to the orchestrator: every message passes the access check first
 * (zero LLM calls for strangers), commands are answered here, prompts go to `orchestrator.send`
 * with a ThreadHandle that streams the reply back. The state is a `BridgeState`; the steps are
 * in bridge-messages.ts and bridge-commands.ts.
 */
export function createChatBridge(chat: Chat, options: ChatBridgeOptions): ChatBridge {
  const { adapterName, orchestrator, logger, reply } = options;
  const state = new BridgeState(chat, options);

  const guard = (fn: () => Promise<void>): Promise<void> =>
    state.track(
      fn().catch((error: unknown) => {
        logger.error("channel: message handling failed", {
          channel: adapterName,
          error: String(error),
        });
      }),
    );

  chat.onDirectMessage((thread, message) =>
    guard(() => handleMessage(state, thread, message, true)),
  );
  chat.onNewMention((thread, message) => guard(() => handleMessage(state, thread, message, true)));
  // A followed thread (see `follow` in bridge-messages.ts): every message there is for guppy; each starts its quiet
  // period (GUPPY_THREAD_FOLLOW_HOURS) again.
  chat.onSubscribedMessage((thread, message) =>
    guard(() => {
      options.follows?.touch(thread.id);
      return handleMessage(state, thread, message, true);
    }),
  );
  chat.onNewMessage(/[\s\S]*/, (thread, message) =>
    guard(() =>
      handleMessage(
        state,
        thread,
        message,
        options.groupReplies === "all" || message.replyTo?.author.isMe === true,
      ),
    ),
  );
  chat.onSlashCommand((event) => guard(() => handleSlashCommand(state, event)));

  const link: ChannelLink = {
    adapterId: adapterName,
    threadHandle: (threadId) =>
      createChatThreadHandle(threadId, chat.thread(state.chatThreadFor(threadId)), reply, logger),
    postToChannel: async (channelId, text) => {
      // The Chat SDK names a channel with its adapter ("telegram:1001"); an event file and
      // send_message name it without (adapterId "telegram", channelId "1001").
      const id = channelId.startsWith(`${adapterName}:`)
        ? channelId
        : `${adapterName}:${channelId}`;
      const sent = await chat.channel(id).post({ markdown: text });
      return sent.threadId;
    },
  };
  orchestrator.registerChannel(link);

  return { idle: () => state.idle() };
}
