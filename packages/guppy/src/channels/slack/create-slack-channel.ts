import { createSlackAdapter } from "@chat-adapter/slack";
import type { GatewayChannel } from "../../gateway/gateway-channel.js";
import { toChatLogger } from "../bridge/chat-logger.js";
import {
  type RunningChatChannel,
  startChatChannel,
  stopChatChannel,
} from "../bridge/start-chat-channel.js";
import { splitMessage } from "../format/split-message.js";

/** Slack's practical limit for one message's text (the API truncates at 40,000; blocks at 3,000). */
export const SLACK_MESSAGE_LIMIT = 3000;

/** Slack through `@chat-adapter/slack` in Socket Mode (an outgoing WebSocket: no public URL). */
export function createSlackChannel(): GatewayChannel {
  let running: RunningChatChannel | undefined;
  return {
    name: "slack",
    async start(context) {
      const { config, logger } = context;
      if (!config.slackBotToken || !config.slackAppToken) {
        throw new Error("Slack needs both SLACK_BOT_TOKEN and SLACK_APP_TOKEN (Socket Mode)");
      }
      const adapter = createSlackAdapter({
        mode: "socket",
        botToken: config.slackBotToken,
        appToken: config.slackAppToken,
        logger: toChatLogger(logger, "slack"),
      });
      running = await startChatChannel(context, "slack", adapter, {
        split: (text) => splitMessage(text, SLACK_MESSAGE_LIMIT),
        mode: "edit",
        editIntervalMs: 1000,
        typingIntervalMs: 3000,
      });
      logger.info("slack: socket mode started");
    },
    async stop() {
      const current = running;
      running = undefined;
      await stopChatChannel(current);
    },
  };
}
