import { stringValue, tokenValue } from "@guppy/core/config";
import { accessPolicySetting } from "../../access/access-settings.js";
import { defineChannel } from "../channel.js";
import { info } from "./info.js";

/** Discord: the Gateway WebSocket with a bot token (docs/channels.md#discord). */
export const discord = defineChannel({
  ...info,
  settings: {
    discordBotToken: {
      env: "DISCORD_BOT_TOKEN",
      parse: tokenValue,
      secret: true,
      description: "Discord bot token",
    },
    discordApplicationId: {
      env: "DISCORD_APPLICATION_ID",
      parse: stringValue,
      description: "Discord application id (Developer Portal, General Information)",
    },
    discordPublicKey: {
      env: "DISCORD_PUBLIC_KEY",
      parse: stringValue,
      description: "Discord application public key (Developer Portal, General Information)",
    },
    ...accessPolicySetting(info.name, info.label),
  },
  access: true,
  enabled: (config) => Boolean(config.discordBotToken),
  load: async () => (await import("./create-discord-channel.js")).createDiscordChannel(info),
});
