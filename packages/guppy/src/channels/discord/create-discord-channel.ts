import { createDiscordAdapter } from "@chat-adapter/discord";
import type { Logger } from "@guppy/core";
import { createAccessStore } from "../../access/access-store.js";
import type { GatewayChannel } from "../../gateway/gateway-channel.js";
import { toChatLogger } from "../bridge/chat-logger.js";
import {
  type RunningChatChannel,
  startChatChannel,
  stopChatChannel,
} from "../bridge/start-chat-channel.js";
import { splitMessage } from "../format/split-message.js";

/** Discord's limit on a message's content. */
export const DISCORD_MESSAGE_LIMIT = 2000;

/** How long one Gateway listener session runs before it is restarted (the adapter's API is timed). */
const LISTENER_SESSION_MS = 6 * 60 * 60 * 1000;

/** Keeps the Discord Gateway WebSocket open until `signal` aborts, reconnecting after failures. */
async function keepGatewayOpen(
  start: (signal: AbortSignal) => Promise<unknown>,
  signal: AbortSignal,
  logger: Logger,
): Promise<void> {
  while (!signal.aborted) {
    try {
      await start(signal);
    } catch (error) {
      logger.warn("discord: gateway listener failed; reconnecting", { error: String(error) });
      await new Promise((resolve) => setTimeout(resolve, 5000).unref());
    }
  }
}

/** Discord through `@chat-adapter/discord` over the Gateway WebSocket (no public URL needed). */
export function createDiscordChannel(): GatewayChannel {
  let running: RunningChatChannel | undefined;
  let abort: AbortController | undefined;
  let listener: Promise<void> | undefined;
  return {
    name: "discord",
    async start(context) {
      const { config, logger } = context;
      if (!config.discordBotToken) throw new Error("DISCORD_BOT_TOKEN is not set");
      if (!config.discordApplicationId) {
        throw new Error(
          "Discord needs DISCORD_APPLICATION_ID (Developer Portal, General Information)",
        );
      }
      // A hand-edited access file that does not read stops the start, naming file and line.
      createAccessStore(config.home).check("discord");
      const adapter = createDiscordAdapter({
        botToken: config.discordBotToken,
        applicationId: config.discordApplicationId,
        // Messages arrive over the Gateway WebSocket; no interaction webhook is served, so without
        // a public key every webhook request is refused.
        ...(config.discordPublicKey
          ? { publicKey: config.discordPublicKey }
          : { webhookVerifier: () => false }),
        logger: toChatLogger(logger, "discord"),
      });
      running = await startChatChannel(context, "discord", adapter, {
        split: (text) => splitMessage(text, DISCORD_MESSAGE_LIMIT),
        mode: "edit",
        editIntervalMs: 1200,
        typingIntervalMs: 8000,
      });
      abort = new AbortController();
      const pending: Promise<unknown>[] = [];
      listener = keepGatewayOpen(
        async (signal) => {
          await adapter.startGatewayListener(
            { waitUntil: (task) => void pending.push(task) },
            LISTENER_SESSION_MS,
            signal,
          );
          // startGatewayListener returns at once; the session runs in the waitUntil task.
          while (pending.length > 0) await pending.shift();
        },
        abort.signal,
        logger,
      );
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
