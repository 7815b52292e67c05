import type { ChannelInfo } from "../channel.js";

/**
 * Discord's name, label and capabilities, apart from its descriptor (descriptor.ts), which loads
 * its code: the chat bridge reads them by name (chat-channels.ts) without an import cycle.
 * A Discord thread is a conversation of its own, and the API lists its messages.
 */
export const info = {
  name: "discord",
  label: "Discord",
  capabilities: { followsThreads: true, listsHistory: true, heartbeat: "chat" },
} as const satisfies ChannelInfo;
