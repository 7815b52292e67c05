import { silentLogger } from "@guppy/core";
import { type AccessConfig, channelAccessSettings } from "../../access/access-settings.js";
import { createAccessStore } from "../../access/access-store.js";
import { createAccessControl } from "../../access/create-access-control.js";
import { secretValues, toChatLogger } from "../bridge/chat-logger.js";
import { splitMessage } from "../bridge/split-message.js";
import {
  type RunningChatChannel,
  startChatChannel,
  stopChatChannel,
} from "../bridge/start-chat-channel.js";
import { type ChannelInfo, type GatewayChannel, refusedToken, settingName } from "../channel.js";
import { TELEGRAM_API_DEFAULT } from "./check-bot-token.js";
import { createGuppyTelegramAdapter } from "./guppy-telegram-adapter.js";
import { registerTelegramCommands } from "./register-telegram-commands.js";
import { renderTelegramMarkdown, TELEGRAM_MESSAGE_LIMIT } from "./telegram-format.js";

export { TELEGRAM_API_DEFAULT };

/** The settings the Telegram channel reads (its descriptor's and the access settings). */
export type TelegramConfig = AccessConfig & { telegramBotToken?: string; telegramApiUrl?: string };

export interface TelegramChannelOptions {
  /** Minimum time between edits of a streamed reply (Telegram allows about one per second per chat). */
  editIntervalMs?: number;
  /** getUpdates long-poll timeout in seconds. */
  pollTimeoutSeconds?: number;
}

/**
 * Whether guppy answers a Telegram user in a private chat, read without side effects (no pairing
 * code is issued, nothing is logged): anyone under `open`; a user in GUPPY_ALLOWED_USERS or
 * approved under `pairing` and `allowlist` (a stranger under `pairing` gets a code, not an
 * answer); no one under `disabled`. The approved list is read from disk each time, like the
 * access check does, so an approval counts at once.
 */
function answeredUser(config: AccessConfig, channel: string): (userId: string) => boolean {
  const access = createAccessControl({
    store: createAccessStore(config.home),
    settings: (channel) => channelAccessSettings(config, channel),
    // The access check that follows reports a broken approved.json; once is enough.
    logger: silentLogger,
  });
  return (userId) => {
    const { policy } = channelAccessSettings(config, channel);
    if (policy === "open") return true;
    if (policy === "disabled") return false;
    try {
      return access.admitted(channel, userId) !== undefined;
    } catch {
      return false; // an unreadable approved.json: the access check reports it
    }
  };
}

/**
 * The Bot API answers a wrong token with 401 and a malformed one with 404 (the first calls at
 * start: getMe, deleteWebhook); the adapter's errors for those only say "Unauthorized" or
 * "deleteWebhook not found in telegram".
 */
function startError(error: unknown, config: TelegramConfig, channel: ChannelInfo): unknown {
  const name = error instanceof Error ? error.name : "";
  const refused = (detail: string) =>
    refusedToken(config, channel, "telegramBotToken", "bot token", detail);
  if (name === "AuthenticationError") return refused(`401 ${(error as Error).message}`);
  if (name === "ResourceNotFoundError") {
    const api = config.telegramApiUrl
      ? ` (or ${settingName(config, "telegramApiUrl")} is not a Bot API server)`
      : "";
    return refused(`404 Not Found${api}`);
  }
  return error;
}

/**
 * Telegram through `@chat-adapter/telegram` in long-polling mode (no public URL needed); replies
 * are MarkdownV2 (the adapter re-sends as plain text when Telegram rejects the entities), split at
 * 4,096 rendered characters; "typing…" on arrival only for users guppy answers.
 */
export function createTelegramChannel(
  channel: ChannelInfo,
  options: TelegramChannelOptions = {},
): GatewayChannel<TelegramConfig> {
  let running: RunningChatChannel | undefined;
  return {
    name: channel.name,
    async start(context) {
      const { config, logger } = context;
      const token = config.telegramBotToken;
      if (!token) throw new Error("TELEGRAM_BOT_TOKEN is not set");
      const apiBaseUrl = (config.telegramApiUrl ?? TELEGRAM_API_DEFAULT).replace(/\/+$/, "");
      // A hand-edited access file that does not read stops the start, naming file and line.
      createAccessStore(config.home).check(channel.name);
      const adapter = createGuppyTelegramAdapter(
        {
          botToken: token,
          apiBaseUrl,
          mode: "polling",
          longPolling: { timeout: options.pollTimeoutSeconds ?? 30, deleteWebhook: true },
          mentionOnReply: true,
          // Every message reaches guppy's access check (it logs refusals, redeems invites).
          allowedUserIds: [],
          streamingEditIntervalMs: options.editIntervalMs ?? 1500,
          logger: toChatLogger(logger, channel.name, secretValues(config)),
        },
        answeredUser(config, channel.name),
        config.home,
        logger,
      );
      try {
        running = await startChatChannel(
          context,
          channel.name,
          adapter,
          {
            split: (text) => splitMessage(text, TELEGRAM_MESSAGE_LIMIT, renderTelegramMarkdown),
            mode: "edit",
            editIntervalMs: options.editIntervalMs ?? 1500,
            typingIntervalMs: 4000,
          },
          { refusedAtShutdown: (message) => adapter.refusedAtShutdown(message) },
        );
      } catch (error) {
        await adapter.stopPolling().catch(() => {});
        throw startError(error, config, channel);
      }
      await registerTelegramCommands(apiBaseUrl, token, logger);
      logger.info("telegram: polling started");
    },
    async stop(runsEnded) {
      const current = running;
      running = undefined;
      await stopChatChannel(current, runsEnded);
    },
  };
}
