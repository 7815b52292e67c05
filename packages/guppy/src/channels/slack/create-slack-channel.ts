import { createSlackAdapter } from "@chat-adapter/slack";
import type { AccessConfig } from "../../access/access-settings.js";
import { createAccessStore } from "../../access/access-store.js";
import { secretValues, toChatLogger } from "../bridge/chat-logger.js";
import { splitMessage } from "../bridge/split-message.js";
import {
  type RunningChatChannel,
  startChatChannel,
  stopChatChannel,
} from "../bridge/start-chat-channel.js";
import { type ChannelInfo, type GatewayChannel, refusedToken } from "../channel.js";

/** Slack's answers (`{"ok": false, "error": ...}`) to a token it does not accept. */
const TOKEN_REFUSALS = new Set([
  "invalid_auth",
  "not_authed",
  "account_inactive",
  "token_revoked",
  "token_expired",
  "not_allowed_token_type",
  "missing_scope",
]);

/**
 * At start the adapter checks the bot token (a failure is only logged) and then opens the Socket
 * Mode connection with the app-level token: a refusal of that is the Web API's bare "An API error
 * occurred: invalid_auth".
 */
function refusal(error: unknown): string | undefined {
  const e = error as { code?: unknown; data?: { error?: unknown } } | undefined;
  const reason = e?.data?.error;
  return e?.code === "slack_webapi_platform_error" &&
    typeof reason === "string" &&
    TOKEN_REFUSALS.has(reason)
    ? reason
    : undefined;
}

/** Slack's practical limit for one message's text (the API truncates at 40,000; blocks at 3,000). */
export const SLACK_MESSAGE_LIMIT = 3000;

/** The settings the Slack channel reads (its descriptor's and the access settings). */
export type SlackConfig = AccessConfig & { slackBotToken?: string; slackAppToken?: string };

/** Slack through `@chat-adapter/slack` in Socket Mode (an outgoing WebSocket: no public URL). */
export function createSlackChannel(channel: ChannelInfo): GatewayChannel<SlackConfig> {
  let running: RunningChatChannel | undefined;
  return {
    name: channel.name,
    async start(context) {
      const { config, logger } = context;
      if (!config.slackBotToken || !config.slackAppToken) {
        throw new Error("Slack needs both SLACK_BOT_TOKEN and SLACK_APP_TOKEN (Socket Mode)");
      }
      // A hand-edited access file that does not read stops the start, naming file and line.
      createAccessStore(config.home).check(channel.name);
      const adapter = createSlackAdapter({
        mode: "socket",
        botToken: config.slackBotToken,
        appToken: config.slackAppToken,
        logger: toChatLogger(logger, channel.name, secretValues(config)),
      });
      try {
        running = await startChatChannel(context, channel.name, adapter, {
          split: (text) => splitMessage(text, SLACK_MESSAGE_LIMIT),
          mode: "edit",
          editIntervalMs: 1000,
          typingIntervalMs: 3000,
        });
      } catch (error) {
        const reason = refusal(error);
        throw reason
          ? refusedToken(config, channel, "slackAppToken", "app-level token", reason)
          : error;
      }
      logger.info("slack: socket mode started");
    },
    async stop(runsEnded) {
      const current = running;
      running = undefined;
      await stopChatChannel(current, runsEnded);
    },
  };
}
