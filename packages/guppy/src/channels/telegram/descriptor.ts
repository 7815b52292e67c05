import { tokenValue, urlValue } from "@guppy/core/config";
import { accessPolicySetting } from "../../access/access-settings.js";
import { defineChannel } from "../channel.js";
import { info } from "./info.js";

/** Telegram: long polling with a bot token (docs/channels.md#telegram). */
export const telegram = defineChannel({
  ...info,
  settings: {
    telegramBotToken: {
      env: "TELEGRAM_BOT_TOKEN",
      parse: tokenValue,
      secret: true,
      description: "Telegram bot token (enables the Telegram channel)",
    },
    telegramApiUrl: {
      env: "GUPPY_TELEGRAM_API_URL",
      parse: urlValue,
      description: "Telegram Bot API root (self-hosted Bot API server or an emulator)",
    },
    ...accessPolicySetting(info.name, info.label),
  },
  access: true,
  enabled: (config) => Boolean(config.telegramBotToken),
  load: async () => (await import("./create-telegram-channel.js")).createTelegramChannel(info),
});
