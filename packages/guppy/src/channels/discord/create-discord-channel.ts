import { createDiscordAdapter } from "@chat-adapter/discord";
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
import { checkBotToken, DISCORD_API_DEFAULT } from "./check-bot-token.js";
import { keepGatewayOpen } from "./keep-gateway-open.js";

/** Discord's limit on a message's content. */
export const DISCORD_MESSAGE_LIMIT = 2000;

/** How long one Gateway listener session runs before it is restarted (the adapter's API is timed). */
const LISTENER_SESSION_MS = 6 * 60 * 60 * 1000;

/** The settings the Discord channel reads (its descriptor's and the access settings). */
export type DiscordConfig = AccessConfig & {
  discordBotToken?: string;
  discordApplicationId?: string;
  discordPublicKey?: string;
};

/** Discord through `@chat-adapter/discord` over the Gateway WebSocket (no public URL needed). */
export function createDiscordChannel(channel: ChannelInfo): GatewayChannel<DiscordConfig> {
  let running: RunningChatChannel | undefined;
  let abort: AbortController | undefined;
  let listener: Promise<void> | undefined;
  return {
    name: channel.name,
    async start(context) {
      const { config, logger } = context;
      const token = config.discordBotToken;
      if (!token) throw new Error("DISCORD_BOT_TOKEN is not set");
      if (!config.discordApplicationId) {
        throw new Error(
          "Discord needs DISCORD_APPLICATION_ID (Developer Portal, General Information)",
        );
      }
      // A hand-edited access file that does not read stops the start, naming file and line.
      createAccessStore(config.home).check(channel.name);
      // The adapter's own setting for the REST API root; given to it explicitly so that the
      // token check below asks the same server.
      const apiUrl = (process.env.DISCORD_API_URL || DISCORD_API_DEFAULT).replace(/\/+$/, "");
      // The Gateway login only logs a refused token and returns: check it here, so that a wrong
      // one stops the start with one line (exit 2) and never becomes a loop of logins. Discord
      // unreachable is an ordinary failure (exit 1), which a service manager retries.
      const refused = () =>
        refusedToken(config, channel, "discordBotToken", "bot token", "401 Unauthorized");
      if ((await checkBotToken(apiUrl, token)) === "refused") throw refused();
      const adapter = createDiscordAdapter({
        botToken: token,
        apiUrl,
        applicationId: config.discordApplicationId,
        // Messages arrive over the Gateway WebSocket; no interaction webhook is served, so without
        // a public key every webhook request is refused.
        ...(config.discordPublicKey
          ? { publicKey: config.discordPublicKey }
          : { webhookVerifier: () => false }),
        logger: toChatLogger(logger, channel.name, secretValues(config)),
      });
      running = await startChatChannel(context, channel.name, adapter, {
        split: (text) => splitMessage(text, DISCORD_MESSAGE_LIMIT),
        mode: "edit",
        editIntervalMs: 1200,
        typingIntervalMs: 8000,
      });
      abort = new AbortController();
      const pending: Promise<unknown>[] = [];
      const signal = abort.signal;
      listener = keepGatewayOpen({
        session: async () => {
          await adapter.startGatewayListener(
            { waitUntil: (task) => void pending.push(task) },
            LISTENER_SESSION_MS,
            signal,
          );
          // startGatewayListener returns at once; the session runs in the waitUntil task.
          while (pending.length > 0) await pending.shift();
        },
        sessionMs: LISTENER_SESSION_MS,
        signal,
        // The adapter has logged why (a failed login, say); the token is asked about again so
        // that one revoked since the start is named, once per wait.
        onEarlyEnd: async ({ error, delayMs }) => {
          const retryInSeconds = Math.round(delayMs / 1000);
          let check: string;
          try {
            check = await checkBotToken(apiUrl, token, signal);
          } catch (checkError) {
            check = checkError instanceof Error ? checkError.message : String(checkError);
          }
          if (signal.aborted) return;
          if (check === "refused") {
            logger.error(`discord: ${refused().message}; next login in ${retryInSeconds} s`);
            return;
          }
          logger.warn(`discord: gateway session ended early; reconnecting in ${retryInSeconds} s`, {
            ...(error === undefined ? {} : { error: String(error) }),
            ...(check === "accepted" ? {} : { tokenCheck: check }),
          });
        },
      });
      logger.info("discord: gateway listener started");
    },
    async stop(runsEnded) {
      abort?.abort();
      await listener;
      const current = running;
      running = undefined;
      await stopChatChannel(current, runsEnded);
    },
  };
}
