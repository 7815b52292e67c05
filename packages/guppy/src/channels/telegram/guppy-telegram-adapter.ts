import {
  TelegramAdapter,
  type TelegramAdapterConfig,
  type TelegramLongPollingConfig,
  type TelegramMessage,
  type TelegramUpdate,
} from "@chat-adapter/telegram";
import type { Logger } from "@guppy/core";
import type { Message, WebhookOptions } from "chat";
import { parseChatCommand } from "../bridge/chat-commands.js";
import { createTelegramIntake, readHeldUpdates } from "./telegram-intake.js";

/** The adapter, and what the bridge tells it. */
export interface GuppyTelegramAdapter extends TelegramAdapter {
  /**
   * The bridge's word that `message` was refused because guppy is shutting down: its update is
   * not confirmed, so Telegram sends it again at the next start. Always true.
   */
  refusedAtShutdown(message: Message): boolean;
}

/** How often getUpdates is asked again while an update taken is still being handled. */
const BUSY_POLL_MS = 200;
/** How long the last confirmation at stop may take. */
const FINAL_CONFIRM_MS = 3000;

/** The adapter's resolved long-polling settings (its type is not exported). */
interface PollingConfig {
  allowedUpdates?: string[];
  limit: number;
  retryDelayMs: number;
  timeout: number;
}

/**
 * `@chat-adapter/telegram`'s adapter with these changes for guppy:
 *
 * - It shows "typing…" in a private chat the moment a message arrives, before guppy's access
 *   check has run, so a stranger guppy ignores still saw the bot typing. This one asks
 *   `mayType(userId)` first. (The adapter's own `allowedUserIds` filter is no substitute: it
 *   drops a message unseen, so an invite could not be redeemed and no refusal would be logged.)
 * - Its polling loop is guppy's own (`telegram-intake.ts`): an update is confirmed to Telegram
 *   only once the bridge has it, and a text sent right after an album comes after the album.
 *   The adapter's loop confirmed each batch with its next getUpdates and kept an album's parts in
 *   memory meanwhile, so a crash or a stop could lose them.
 * - A start first hands over what an older guppy left in `<home>/telegram/held-updates.jsonl`,
 *   then removes the file.
 */
export function createGuppyTelegramAdapter(
  config: TelegramAdapterConfig,
  mayType: (userId: string) => boolean,
  home: string,
  logger: Logger,
): GuppyTelegramAdapter {
  class Adapter extends TelegramAdapter implements GuppyTelegramAdapter {
    private readonly intake = createTelegramIntake({
      handOver: (update) => this.processUpdate(update, { deduplicate: false }) ?? [],
      isStop: (message) => this.isStop(message),
      logger,
    });
    private stopping = false;
    private abort = new AbortController();
    /** The offset Telegram was last told. */
    private confirmed: number | undefined;

    refusedAtShutdown(message: Message): boolean {
      this.intake.refused(message.id);
      return true;
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
      this.stopping = false;
      this.abort = new AbortController();
      await super.startPolling(pollingConfig);
    }

    override async stopPolling(): Promise<void> {
      this.stopping = true;
      this.abort.abort();
      await super.stopPolling();
    }

    protected override async pollingLoop(pollingConfig: PollingConfig): Promise<void> {
      // Before the first update is taken: a thread's fetched updates wait behind these.
      this.replayHeld();
      let failures = 0;
      while (this.isPolling && !this.stopping) {
        try {
          await this.ensureBotIdentity();
          const updates = await this.getUpdates(pollingConfig, this.intake.busy() ? 0 : undefined);
          failures = 0;
          this.intake.take(updates);
          if (this.intake.busy()) {
            // Telegram answers at once while an update is unconfirmed: ask again shortly, for
            // the other chats' messages, or once it is handled.
            await Promise.race([
              this.intake.changed(),
              this.sleep(BUSY_POLL_MS, this.abort.signal),
            ]);
          }
        } catch (error) {
          if (!this.isPolling || this.stopping) break;
          failures++;
          const delay = Math.min(pollingConfig.retryDelayMs * 2 ** (failures - 1), 30_000);
          this.logger.warn("Telegram polling request failed", {
            error: String(error),
            retryDelayMs: delay,
            consecutiveFailures: failures,
          });
          await this.sleep(delay, this.abort.signal);
        }
      }
      // What was taken is handed over (a prompt refused at shutdown stays with Telegram), and
      // what the bridge has is confirmed, so it does not come again.
      await this.intake.settled();
      await this.confirmHandled();
    }

    private async getUpdates(pollingConfig: PollingConfig, timeout?: number) {
      const offset = this.intake.offset();
      const updates = await this.telegramFetch<TelegramUpdate[]>(
        "getUpdates",
        {
          allowed_updates: pollingConfig.allowedUpdates,
          limit: pollingConfig.limit,
          offset,
          timeout: timeout ?? pollingConfig.timeout,
        },
        { signal: this.abort.signal },
      );
      this.confirmed = offset;
      return updates;
    }

    private async confirmHandled(): Promise<void> {
      const offset = this.intake.offset();
      if (offset === undefined || offset === this.confirmed) return;
      try {
        await this.telegramFetch(
          "getUpdates",
          { offset, limit: 1, timeout: 0 },
          { signal: AbortSignal.timeout(FINAL_CONFIRM_MS) },
        );
        this.confirmed = offset;
      } catch (error) {
        // They come again at the next start, and are dropped then as delivered again.
        this.logger.debug("Could not confirm the last Telegram updates", { error: String(error) });
      }
    }

    /** What an older guppy kept in held-updates.jsonl: handed over, then the file removed. */
    private replayHeld(): void {
      const held = readHeldUpdates(home, logger);
      if (held.updates.length === 0) {
        held.clear();
        return;
      }
      logger.info("telegram: handing over the messages kept at the last stop", {
        updates: held.updates.length,
      });
      void this.intake.replay(held.updates).then((accepted) => {
        if (accepted) held.clear();
      });
    }

    private isStop(message: TelegramMessage): boolean {
      const parsed = parseChatCommand(message.text ?? "", this.userName);
      return parsed?.kind === "command" && parsed.command === "stop";
    }
  }
  return new Adapter(config);
}
