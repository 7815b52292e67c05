import { existsSync, fsyncSync, mkdirSync, truncateSync } from "node:fs";
import { dirname, join } from "node:path";
import type { TelegramMessage, TelegramUpdate } from "@chat-adapter/telegram";
import {
  appendLines,
  forgetAppendState,
  type Logger,
  openAppendFd,
  readJsonl,
  serializeJsonl,
  syncDirectory,
  writeFileAtomic,
} from "@guppy/core";

/** Under GUPPY_HOME. */
export const HELD_UPDATES_FILE = join("telegram", "held-updates.jsonl");

/** The new message an update carries (an edit is none: the bridge takes no edit as a message). */
export function newMessage(update: TelegramUpdate): TelegramMessage | undefined {
  return update.message ?? update.channel_post ?? update.business_message;
}

/** One line of the file: an update kept (the raw update), or one handed over since. */
type HeldRecord = { update: TelegramUpdate } | { done: number };

function isHeldRecord(value: unknown): value is HeldRecord {
  if (value === null || typeof value !== "object") return false;
  const v = value as Record<string, unknown>;
  if ("done" in v) return typeof v.done === "number";
  const update = v.update as Record<string, unknown> | null | undefined;
  return typeof update === "object" && update !== null && typeof update.update_id === "number";
}

/** The adapter's message id of an update's message (`<chat id>:<message id>`). */
function messageKey(update: TelegramUpdate): string | undefined {
  const message = newMessage(update);
  return message && `${message.chat.id}:${message.message_id}`;
}

/**
 * `<home>/telegram/held-updates.jsonl`: the Telegram updates the adapter keeps in memory after
 * Telegram has been told they arrived — an album's parts (the polling loop keeps them a second,
 * then they are combined) and a message held behind an album (`album-order.ts`). A plain message
 * is in the durable inbox before its getUpdates batch is confirmed; these are not, so each is
 * written here, fsync'd, before the adapter's polling loop can confirm it (its next getUpdates),
 * and gets a `done` line once handed over to the bridge. The next start hands over again the
 * ones left without `done` (a crash, or a shutdown that refused them): a message the thread had
 * accepted after all is dropped then as delivered again. The file is emptied whenever nothing is
 * kept, and rewritten at start with only the updates left.
 */
export interface HeldUpdates {
  /** The updates left kept by the last run, in update_id order (read when opened). */
  readonly leftover: readonly TelegramUpdate[];
  /** Whether the update is kept (written, not handed over yet). */
  has(updateId: number): boolean;
  /** Whether the message with this adapter message id (`<chat id>:<message id>`) is kept. */
  hasMessage(messageId: string): boolean;
  /** Writes the updates not kept yet and fsyncs them before it returns; throws if it cannot. */
  keep(updates: readonly TelegramUpdate[]): void;
  /** These updates were handed over: a `done` line each (not fsync'd: at worst one comes again). */
  done(updateIds: readonly number[]): void;
  close(): void;
}

export function openHeldUpdates(home: string, logger: Logger): HeldUpdates {
  const path = join(home, HELD_UPDATES_FILE);
  const kept = new Map<number, TelegramUpdate>();
  const records = readJsonl(path, logger, isHeldRecord);
  for (const record of records) {
    if ("update" in record) kept.set(record.update.update_id, record.update);
    else kept.delete(record.done);
  }
  const leftover = [...kept.values()].sort((a, b) => a.update_id - b.update_id);
  const messages = new Map<string, number>();
  for (const update of leftover) {
    const key = messageKey(update);
    if (key !== undefined) messages.set(key, update.update_id);
  }
  if (records.length > leftover.length) {
    // Lines handed over since: only the updates left are kept.
    forgetAppendState(path);
    try {
      writeFileAtomic(path, serializeJsonl(leftover.map((update) => ({ update }))));
    } catch (error) {
      logger.warn("telegram: could not rewrite the held updates; appending to them", {
        error: String(error),
      });
    }
  }

  /**
   * Appends the lines (through the store's kept-open append: a torn last line, a short write and
   * a file removed behind guppy's back are handled there); `sync`: fsync'd before it returns, with
   * the directory entries a new file or directory needs.
   */
  const write = (records: readonly HeldRecord[], sync: boolean) => {
    const dir = dirname(path);
    const unsynced: string[] = [];
    if (!existsSync(path)) {
      if (mkdirSync(dir, { recursive: true }) !== undefined) unsynced.push(dirname(dir));
      unsynced.push(dir);
    }
    appendLines(path, records);
    if (!sync) return;
    const open = openAppendFd(path);
    if (open) fsyncSync(open.fd);
    for (const d of unsynced) syncDirectory(d);
  };

  return {
    leftover,
    has: (updateId) => kept.has(updateId),
    hasMessage: (messageId) => messages.has(messageId),

    keep(updates) {
      const fresh = updates.filter((update) => !kept.has(update.update_id));
      if (fresh.length === 0) return;
      write(
        fresh.map((update) => ({ update })),
        true,
      );
      for (const update of fresh) {
        kept.set(update.update_id, update);
        const key = messageKey(update);
        if (key !== undefined) messages.set(key, update.update_id);
      }
    },

    done(updateIds) {
      const finished = updateIds.filter((id) => kept.has(id));
      if (finished.length === 0) return;
      for (const id of finished) {
        const key = messageKey(kept.get(id) as TelegramUpdate);
        if (key !== undefined && messages.get(key) === id) messages.delete(key);
        kept.delete(id);
      }
      try {
        if (kept.size > 0) {
          write(
            finished.map((done) => ({ done })),
            false,
          );
        } else {
          // Nothing kept: the file is emptied (a crash before or after leaves nothing to do).
          forgetAppendState(path);
          truncateSync(path, 0);
        }
      } catch (error) {
        logger.warn("telegram: could not mark held updates handed over", {
          error: String(error),
          path,
        });
      }
    },

    close() {
      forgetAppendState(path);
    },
  };
}
