import {
  TelegramAdapter,
  type TelegramAdapterConfig,
  type TelegramLongPollingConfig,
  type TelegramMessage,
  type TelegramUpdate,
} from "@chat-adapter/telegram";
import type { Message, WebhookOptions } from "chat";
import { parseChatCommand } from "../bridge/chat-commands.js";
import { createAlbumOrder } from "./album-order.js";
import { type HeldUpdates, newMessage } from "./held-updates.js";

/** A Telegram thread as the adapter tells them apart: chat, topic, business connection. */
function threadOf(message: TelegramMessage): string {
  return JSON.stringify([
    message.chat.id,
    message.message_thread_id,
    message.business_connection_id,
  ]);
}

/** The adapter, and what the bridge tells it. */
export interface GuppyTelegramAdapter extends TelegramAdapter {
  /**
   * The bridge's word that `message` was refused because guppy is shutting down. From then on no
   * update is marked handed over (the ones handed over now may be refused too), and this says
   * whether the message is one the adapter keeps on disk: then the next start hands it over again.
   */
  refusedAtShutdown(message: Message): boolean;
}

/**
 * `@chat-adapter/telegram`'s adapter with these changes for guppy:
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
 *   stop intake for every chat, and the album itself, which only that loop hands over. `/stop` is
 *   never held: it aborts the run the user saw going when they sent it; behind the album it would
 *   come a second or two late, and with nothing else running it would abort the album's own run.
 * - So Telegram is told about album parts and held messages (the loop's next getUpdates) before
 *   they reach the durable inbox: each is written to `held`, fsync'd, first — the parts as the
 *   getUpdates answer comes in, a held message as it is held — and marked done once handed over
 *   (`held-updates.ts`). A start hands over the ones a crash or a shutdown left, in update_id
 *   order (the album's parts, then the messages behind it, held as before), before it polls;
 *   Telegram sending one of them again (not confirmed before a crash) is ignored. When polling
 *   stops, the albums being combined are handed over and so are the messages held behind them;
 *   an album the loop still kept is left for the next start, with the messages behind it.
 * - An album's handling is not returned to the polling loop either: once the loop hands the
 *   parts over, the step that combines them waits another second for more, and the loop,
 *   awaiting it, fetched no chat's messages meanwhile. Its failure is logged and not retried
 *   (the loop retried it with a backoff up to 30 s, holding every chat a second each time; a
 *   part that cannot be read fails the same way again).
 */
export function createGuppyTelegramAdapter(
  config: TelegramAdapterConfig,
  mayType: (userId: string) => boolean,
  held: HeldUpdates,
): GuppyTelegramAdapter {
  class Adapter extends TelegramAdapter implements GuppyTelegramAdapter {
    private readonly albumOrder = createAlbumOrder(this.logger, {
      handedOver: (updateIds) => this.handedOver(updateIds),
    });
    /** Set once a hand-over was refused because guppy is shutting down. */
    private shuttingDown = false;
    /** The updates handed over again at start (update_id → message_id): Telegram's copy is ignored. */
    private readonly replayed = new Map<number, number>();

    refusedAtShutdown(message: Message): boolean {
      this.shuttingDown = true;
      return held.hasMessage(message.id);
    }

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

    override async startPolling(pollingConfig?: TelegramLongPollingConfig): Promise<void> {
      this.replay();
      await super.startPolling(pollingConfig);
    }

    protected override async telegramFetch<TResult>(
      method: string,
      payload?: Record<string, unknown> | FormData,
      request?: { signal?: AbortSignal },
    ): Promise<TResult> {
      const result = await super.telegramFetch<TResult>(method, payload, request);
      if (method === "getUpdates" && Array.isArray(result)) {
        const parts: TelegramUpdate[] = [];
        for (const update of result as TelegramUpdate[]) {
          if (this.isReplayed(update) || !newMessage(update)?.media_group_id) continue;
          this.noteAlbumPart(update);
          parts.push(update);
        }
        // On disk before the loop sees them, so before its next getUpdates confirms them.
        this.keep(parts);
      }
      return result;
    }

    protected override processUpdate(
      update: TelegramUpdate,
      options?: WebhookOptions,
    ): Promise<void>[] | void {
      if (this.isReplayed(update)) return [];
      return this.handle(update, options);
    }

    override async stopPolling(): Promise<void> {
      await super.stopPolling();
      await this.albumOrder.release();
    }

    private handle(update: TelegramUpdate, options?: WebhookOptions): Promise<void>[] | void {
      const message = newMessage(update);
      if (message?.media_group_id) {
        this.noteAlbumPart(update);
        this.keep([update]);
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
        const wait = this.albumOrder.hold(threadOf(message), message.message_id, () =>
          this.handOver(update, options),
        );
        if (wait) {
          // Before the loop's next getUpdates confirms it (this returns to the loop).
          this.keep([update]);
          return [];
        }
      }
      // Kept and not held (handed over again at start, its album done): marked when handed over.
      if (held.has(update.update_id)) return [this.handOver(update, options)];
      return super.processUpdate(update, options);
    }

    /** Hands a kept update to the bridge and marks it handed over (also when that failed). */
    private async handOver(update: TelegramUpdate, options?: WebhookOptions): Promise<void> {
      try {
        await Promise.all(super.processUpdate(update, options) ?? []);
      } finally {
        this.handedOver([update.update_id]);
      }
    }

    private handedOver(updateIds: number[]): void {
      // A refusal at shutdown: what is handed over now may be refused too; it stays kept (a
      // message that was accepted after all is dropped as delivered again at the next start).
      if (!this.shuttingDown) held.done(updateIds);
    }

    private keep(updates: TelegramUpdate[]): void {
      if (updates.length === 0) return;
      try {
        held.keep(updates);
      } catch (error) {
        // They are still handed over from memory, as before there was a file.
        this.logger.error("Could not keep Telegram updates on disk", { error: String(error) });
      }
    }

    /** The updates left kept by the last run, handed over in update_id order. */
    private replay(): void {
      if (held.leftover.length === 0) return;
      this.logger.info("Handing over the Telegram messages kept at the last stop", {
        updates: held.leftover.length,
      });
      for (const update of held.leftover) {
        const message = newMessage(update);
        if (message) this.replayed.set(update.update_id, message.message_id);
      }
      for (const update of held.leftover) {
        try {
          for (const task of this.handle(update, { deduplicate: false }) ?? []) {
            task.catch((error: unknown) => {
              this.logger.warn("A kept Telegram message failed", { error: String(error) });
            });
          }
        } catch (error) {
          this.logger.warn("A kept Telegram message failed", { error: String(error) });
        }
      }
    }

    /** Telegram's copy of an update handed over again at start (it was not confirmed). */
    private isReplayed(update: TelegramUpdate): boolean {
      const messageId = this.replayed.get(update.update_id);
      return messageId !== undefined && newMessage(update)?.message_id === messageId;
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
  return new Adapter(config);
}
