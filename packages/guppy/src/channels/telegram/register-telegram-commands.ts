import type { Logger } from "@guppy/core";
import { chatCommands } from "../bridge/chat-commands.js";

/** Telegram's command menu (setMyCommands); a failure is logged, the channel still starts. */
export async function registerTelegramCommands(
  apiBaseUrl: string,
  token: string,
  logger: Logger,
): Promise<void> {
  try {
    const response = await fetch(`${apiBaseUrl}/bot${token}/setMyCommands`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        commands: chatCommands.map((c) => ({ command: c.command, description: c.description })),
      }),
    });
    const body = (await response.json().catch(() => ({}))) as {
      ok?: boolean;
      description?: string;
    };
    if (!response.ok || body.ok !== true) {
      logger.warn("telegram: setMyCommands failed", {
        status: response.status,
        description: body.description,
      });
    }
  } catch (error) {
    logger.warn("telegram: setMyCommands failed", { error: String(error) });
  }
}
