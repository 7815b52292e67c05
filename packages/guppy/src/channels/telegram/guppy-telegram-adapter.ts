import {
  TelegramAdapter,
  type TelegramAdapterConfig,
  type TelegramMessage,
  type TelegramUpdate,
} from "@chat-adapter/telegram";
import type { WebhookOptions } from "chat";
import { parseChatCommand } from "../bridge/chat-commands.js";
import { createAlbumOrder } from "./album-order.js";

/** The new message an update carries (an edit is none: the bridge takes no edit as a message). */
function newMessage(update: TelegramUpdate): TelegramMessage | undefined {
  return update.message ?? update.channel_post ?? update.business_message;
}

/** A Telegram thread as the adapter tells them apart: chat, topic, business connection. */
function threadOf(message: TelegramMessage): string {
  return JSON.stringify([
    message.chat.id,
    message.message_thread_id,
    message.business_connection_id,
  ]);
}

/**
 * `@chat-adapter/telegram`'s adapter with three changes for guppy:
 *
 * - It shows "typing…" in a private chat the moment a message arrives, before guppy's access
 *   check has run, so a stranger guppy ignores still saw the bot typing. This one asks
 *   `mayType(userId)` first. (The adapter's own `allowedUserIds` filter is no substitute: it
 *   drops a message unseen, so an invite could not be redeemed and no refusal would be logged.)
 * - A message sent after an album whose parts the adapter is still collecting is handed over
 *   after the album (`album-order.ts`), not before it. The albums are noted from each
 *   getUpdates answer, since the polling loop keeps an album's parts to itself for a second
 *   before it hands them to `processUpdate`. A held message is not returned to the polling loop,
 *   which awaits every task of a batch before it polls again: awaiting the album there would
 *   stop intake for every chat, and the album itself, which only that loop hands over. When
 *   polling stops, the held messages are handed over (the albums the loop still kept are lost
 *   with it). `/stop` is never held: it aborts the run the user saw going when they sent it;
 *   behind the album it would come a second or two late, and with nothing else running it
 *   would abort the album's own run.
 * - An album's handling is not returned to the polling loop either: once the loop hands the
 *   parts over, the step that combines them waits another second for more, and the loop,
 *   awaiting it, fetched no chat's messages meanwhile. Its failure is logged and not retried
 *   (the loop retried it with a backoff up to 30 s, holding every chat a second each time; a
 *   part that cannot be read fails the same way again).
 */
export function createGuppyTelegramAdapter(
  config: TelegramAdapterConfig,
  mayType: (userId: string) => boolean,
): TelegramAdapter {
  class GuppyTelegramAdapter extends TelegramAdapter {
    private readonly albumOrder = createAlbumOrder(this.logger);

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

    protected override async telegramFetch<TResult>(
      method: string,
      payload?: Record<string, unknown> | FormData,
      request?: { signal?: AbortSignal },
    ): Promise<TResult> {
      const result = await super.telegramFetch<TResult>(method, payload, request);
      if (method === "getUpdates" && Array.isArray(result)) {
        for (const update of result as TelegramUpdate[]) this.noteAlbumPart(update);
      }
      return result;
    }

    protected override processUpdate(
      update: TelegramUpdate,
      options?: WebhookOptions,
    ): Promise<void>[] | void {
      const message = newMessage(update);
      if (message?.media_group_id) {
        this.noteAlbumPart(update);
        let task: Promise<unknown>;
        try {
          task = Promise.all(super.processUpdate(update, options) ?? []);
        } catch (error) {
          task = Promise.reject(error);
        }
        this.albumOrder.handling(update.update_id, task);
        return [];
      }
      if (message && !this.isStop(message)) {
        const held = this.albumOrder.hold(threadOf(message), message.message_id, async () => {
          await Promise.all(super.processUpdate(update, options) ?? []);
        });
        if (held) return [];
      }
      return super.processUpdate(update, options);
    }

    override async stopPolling(): Promise<void> {
      await super.stopPolling();
      await this.albumOrder.release();
    }

    private noteAlbumPart(update: TelegramUpdate): void {
      const message = newMessage(update);
      if (!message?.media_group_id) return;
      this.albumOrder.notePart(
        update.update_id,
        threadOf(message),
        message.media_group_id,
        message.message_id,
      );
    }

    private isStop(message: TelegramMessage): boolean {
      const parsed = parseChatCommand(message.text ?? "", this.userName);
      return parsed?.kind === "command" && parsed.command === "stop";
    }
  }
  return new GuppyTelegramAdapter(config);
}
