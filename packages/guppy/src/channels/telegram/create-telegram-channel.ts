import { createTelegramAdapter } from "@chat-adapter/telegram";
import type { GatewayChannel } from "../../gateway/gateway-channel.js";
import { toChatLogger } from "../bridge/chat-logger.js";
import {
  type RunningChatChannel,
  startChatChannel,
  stopChatChannel,
} from "../bridge/start-chat-channel.js";
import { splitMessage } from "../format/split-message.js";
import { registerTelegramCommands } from "./register-telegram-commands.js";
import { renderTelegramMarkdown, TELEGRAM_MESSAGE_LIMIT } from "./telegram-format.js";

export const TELEGRAM_API_DEFAULT = "https://api.telegram.org";

export interface TelegramChannelOptions {
  /** Minimum time between edits of a streamed reply (Telegram allows about one per second per chat). */
  editIntervalMs?: number;
  /** getUpdates long-poll timeout in seconds. */
  pollTimeoutSeconds?: number;
}

/**
 * Telegram through `@chat-adapter/telegram` in long-polling mode (no public URL needed); replies
 * are MarkdownV2 (the adapter re-sends as plain text when Telegram rejects the entities), split at
 * 4,096 rendered characters.
 */
export function createTelegramChannel(options: TelegramChannelOptions = {}): GatewayChannel {
  let running: RunningChatChannel | undefined;
  return {
    name: "telegram",
    async start(context) {
      const { config, logger } = context;
      const token = config.telegramBotToken;
      if (!token) throw new Error("TELEGRAM_BOT_TOKEN is not set");
      const apiBaseUrl = (config.telegramApiUrl ?? TELEGRAM_API_DEFAULT).replace(/\/+$/, "");
      const adapter = createTelegramAdapter({
        botToken: token,
        apiBaseUrl,
        mode: "polling",
        longPolling: { timeout: options.pollTimeoutSeconds ?? 30, deleteWebhook: true },
        mentionOnReply: true,
        allowedUserIds: [],
        streamingEditIntervalMs: options.editIntervalMs ?? 1500,
        logger: toChatLogger(logger, "telegram"),
      });
      running = await startChatChannel(context, "telegram", adapter, {
        split: (text) => splitMessage(text, TELEGRAM_MESSAGE_LIMIT, renderTelegramMarkdown),
        mode: "edit",
        editIntervalMs: options.editIntervalMs ?? 1500,
        typingIntervalMs: 4000,
      });
      await registerTelegramCommands(apiBaseUrl, token, logger);
      logger.info("telegram: polling started");
    },
    async stop() {
      const current = running;
      running = undefined;
      await stopChatChannel(current);
    },
  };
}
