import type { GuppyConfig } from "@guppy/core";
import type { GatewayChannel } from "./gateway-channel.js";

/** A channel `guppy serve` can start: enabled by configuration, loaded only when enabled. */
export interface ChannelEntry {
  name: string;
  enabled(config: GuppyConfig): boolean;
  load(): Promise<GatewayChannel>;
}

/**
 * The channel registry: adding a channel to the gateway is one line here. Each entry imports its
 * module lazily, so a disabled channel's SDK is never loaded.
 */
export const configuredChannels: ChannelEntry[] = [
  {
    name: "http",
    enabled: () => true,
    load: async () => (await import("../http/http-channel.js")).createHttpChannel(),
  },
  {
    name: "telegram",
    enabled: (c) => Boolean(c.telegramBotToken),
    load: async () =>
      (await import("../channels/telegram/create-telegram-channel.js")).createTelegramChannel(),
  },
  {
    name: "slack",
    enabled: (c) => Boolean(c.slackBotToken || c.slackAppToken),
    load: async () =>
      (await import("../channels/slack/create-slack-channel.js")).createSlackChannel(),
  },
  {
    name: "discord",
    enabled: (c) => Boolean(c.discordBotToken),
    load: async () =>
      (await import("../channels/discord/create-discord-channel.js")).createDiscordChannel(),
  },
];

/** The channels this configuration enables, loaded. */
export async function loadConfiguredChannels(config: GuppyConfig): Promise<GatewayChannel[]> {
  const out: GatewayChannel[] = [];
  for (const entry of configuredChannels) {
    if (entry.enabled(config)) out.push(await entry.load());
  }
  return out;
}
