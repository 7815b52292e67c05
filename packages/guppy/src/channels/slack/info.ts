import type { ChannelInfo } from "../channel.js";

/**
 * Slack's name, label and capabilities, apart from its descriptor (descriptor.ts), which loads
 * its code: the chat bridge reads them by name (chat-channels.ts) without an import cycle.
 * A Slack thread is a conversation of its own, and the Web API lists its messages.
 */
export const info = {
  name: "slack",
  label: "Slack",
  capabilities: { followsThreads: true, listsHistory: true, heartbeat: "chat" },
} as const satisfies ChannelInfo;
