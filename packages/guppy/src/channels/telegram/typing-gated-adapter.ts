import {
  TelegramAdapter,
  type TelegramAdapterConfig,
  type TelegramMessage,
} from "@chat-adapter/telegram";
import type { WebhookOptions } from "chat";

/**
 * The Telegram adapter shows "typing…" in a private chat the moment a message arrives, before
 * guppy's access check has run, so a stranger guppy ignores still saw the bot typing. This one
 * asks `mayType(userId)` first. (The adapter's own `allowedUserIds` filter is no substitute: it
 * drops a message unseen, so an invite could not be redeemed and no refusal would be logged.)
 */
export function createTypingGatedTelegramAdapter(
  config: TelegramAdapterConfig,
  mayType: (userId: string) => boolean,
): TelegramAdapter {
  class TypingGatedTelegramAdapter extends TelegramAdapter {
    protected override startTypingForPrivateMessage(
      message: TelegramMessage,
      threadId: string,
      options?: WebhookOptions,
    ): void {
      const from = message.from?.id;
      if (from === undefined || mayType(String(from))) {
        super.startTypingForPrivateMessage(message, threadId, options);
      }
    }
  }
  return new TypingGatedTelegramAdapter(config);
}
