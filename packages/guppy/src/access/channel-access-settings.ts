import type { GuppyConfig } from "@guppy/core";
import type { ChannelAccessSettings } from "./access-types.js";

/** The channel's own policy override (GUPPY_<CHANNEL>_ACCESS_POLICY) or the global one. */
export function channelAccessSettings(config: GuppyConfig, channel: string): ChannelAccessSettings {
  const override =
    channel === "telegram"
      ? config.telegramAccessPolicy
      : channel === "slack"
        ? config.slackAccessPolicy
        : channel === "discord"
          ? config.discordAccessPolicy
          : undefined;
  return { policy: override ?? config.accessPolicy, allowedUsers: config.allowedUsers };
}
