import type { ChannelInfo } from "../channel.js";

/**
 * Telegram's name, label and capabilities, apart from its descriptor (descriptor.ts), which loads
 * its code: the chat bridge reads them by name (chat-channels.ts) without an import cycle.
 * A Telegram group is one long chat (nothing followed), and the Bot API has no history call.
 */
export const info = {
  name: "telegram",
  label: "Telegram",
  capabilities: { heartbeat: "chat" },
} as const satisfies ChannelInfo;
