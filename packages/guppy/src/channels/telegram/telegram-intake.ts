import { existsSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import type { TelegramMessage, TelegramUpdate } from "@chat-adapter/telegram";
import type { Logger } from "@guppy/core";
import { readJsonl } from "@guppy/core/fs";

/**
 * Which updates guppy has taken from getUpdates, and the offset that may confirm them: Telegram
 * is told an update arrived (a getUpdates with a higher offset) only once the bridge has handled
 * it — its prompt in the durable inbox, its command acted on, or its sender answered — so the
 * inbox is the only journal. A crash or a stop before then leaves it with Telegram, which sends
 * it again; one the thread had accepted after all is dropped then as delivered again.
 *
 * Each thread's updates are handed over one after another, in update_id order; an album (the
 * updates of one media_group_id) counts as one, handed over whole: its parts go to the adapter
 * together, which combines them into one message a second after the last. So a text sent right
 * after an album comes after it, other threads do not wait, and nothing is confirmed while the
 * album is still being combined. `/stop` never waits: it aborts the run the user saw going.
 */
export interface TelegramIntake {
  /** Takes the updates of a getUpdates answer; those already taken are skipped. */
  take(updates: readonly TelegramUpdate[]): void;
  /**
   * Hands over updates that Telegram no longer has (a file an older guppy kept), in each thread's
   * order like fetched ones, but outside the offset; resolves to whether every one was accepted.
   */
  replay(updates: readonly TelegramUpdate[]): Promise<boolean>;
  /** The getUpdates offset: one past every update handled, none beyond one still being handled. */
  offset(): number | undefined;
  /** Whether an update taken is still being handled, or was refused (it is not confirmed). */
  busy(): boolean;
  /** Resolves when an update taken has been handled. */
  changed(): Promise<void>;
  /** The message (adapter id `<chat>:<message_id>`) was refused because guppy is shutting down. */
  refused(messageId: string): void;
  /** Resolves once every update taken, and every one behind it, has been handled. */
  settled(): Promise<void>;
}

/** The new message an update carries (an edit is none: the bridge takes no edit as a message). */
export function newMessage(update: TelegramUpdate): TelegramMessage | undefined {
  return update.message ?? update.channel_post ?? update.business_message;
}

function anyMessage(update: TelegramUpdate): TelegramMessage | undefined {
  return (
    newMessage(update) ??
    update.edited_message ??
    update.edited_channel_post ??
    update.edited_business_message
  );
}

/** A Telegram thread as the adapter tells them apart: chat, topic, business connection. */
function threadOf(message: TelegramMessage): string {
  return JSON.stringify([
    message.chat.id,
    message.message_thread_id,
    message.business_connection_id,
  ]);
}

/** The adapter's message id (`<chat id>:<message id>`): what the bridge knows a message by. */
function messageKey(message: TelegramMessage): string {
  return `${message.chat.id}:${message.message_id}`;
}

/** One update, or an album's parts: handed over, and confirmed, as one. */
interface Unit {
  updates: TelegramUpdate[];
  /** The message ids of its updates (an album's combined message has its last part's). */
  keys: Set<string>;
  /** The adapter's handling of each update handed over so far. */
  tasks: Promise<unknown>[];
  started: boolean;
  done: boolean;
  /** Refused because guppy is shutting down: left with Telegram, never confirmed. */
  refused: boolean;
  settled: Promise<void>;
}

export interface TelegramIntakeOptions {
  /** The adapter's handling of one update (`processUpdate`): settles once the bridge has it. */
  handOver(update: TelegramUpdate): Promise<unknown>[];
  /** Whether the message is a `/stop` (never waits behind the thread's other messages). */
  isStop(message: TelegramMessage): boolean;
  logger: Pick<Logger, "warn">;
}

// Long by design: one closure per bot whose methods share the offset and the per-chat queues.
export function createTelegramIntake(options: TelegramIntakeOptions): TelegramIntake {
  const { handOver, isStop, logger } = options;
  /** Fetched updates not confirmed yet, by update_id. */
  const taken = new Map<number, Unit>();
  /** One past the highest update_id fetched. */
  let next: number | undefined;
  /** Albums whose parts are not handed over yet, or still being combined: later parts join them. */
  const albums = new Map<string, Unit>();
  /** Per thread, the last unit's end: the next one starts after it. */
  const chains = new Map<string, Promise<void>>();
  const units = new Set<Unit>();
  const refusedKeys = new Set<string>();
  /** Resolved (and replaced) when a unit has been handled. */
  let change: { promise: Promise<void>; resolve: () => void } | undefined;

  const notify = () => {
    change?.resolve();
    change = undefined;
  };

  const start = (unit: Unit, update: TelegramUpdate) => {
    let tasks: Promise<unknown>[];
    try {
      tasks = handOver(update);
    } catch (error) {
      tasks = [Promise.reject(error)];
    }
    unit.tasks.push(...tasks);
  };

  /** Hands the unit's updates over and waits for them, parts that join meanwhile included. */
  const run = async (unit: Unit) => {
    unit.started = true;
    for (const update of unit.updates) start(unit, update);
    let seen = 0;
    while (seen < unit.tasks.length) {
      const tasks = unit.tasks.slice(seen);
      seen = unit.tasks.length;
      for (const result of await Promise.allSettled(tasks)) {
        // Logged, not retried: a message that cannot be read fails the same way again.
        if (result.status === "rejected") {
          logger.warn("telegram: an update could not be handled", {
            error: String(result.reason),
            updateId: unit.updates[0]?.update_id,
          });
        }
      }
    }
    for (const [key, album] of albums) if (album === unit) albums.delete(key);
    unit.refused = [...unit.keys].some((key) => refusedKeys.has(key));
    unit.done = true;
    units.delete(unit);
    notify();
  };

  const enqueue = (unit: Unit, thread: string | undefined) => {
    units.add(unit);
    if (thread === undefined) {
      unit.settled = run(unit);
      return;
    }
    const previous = chains.get(thread) ?? Promise.resolve();
    const settled = previous.then(() => run(unit));
    unit.settled = settled;
    chains.set(thread, settled);
    void settled.then(() => {
      if (chains.get(thread) === settled) chains.delete(thread);
    });
  };

  /** `replayed`: from a file, not fetched (an album of those never joins a fetched one). */
  const add = (update: TelegramUpdate, replayed: boolean): Unit => {
    const message = anyMessage(update);
    const fresh = newMessage(update);
    const album = fresh?.media_group_id
      ? JSON.stringify([threadOf(fresh), fresh.media_group_id, replayed])
      : undefined;
    const joined = album === undefined ? undefined : albums.get(album);
    if (joined) {
      joined.updates.push(update);
      if (fresh) joined.keys.add(messageKey(fresh));
      if (joined.started) start(joined, update);
      return joined;
    }
    const unit: Unit = {
      updates: [update],
      keys: new Set(fresh ? [messageKey(fresh)] : []),
      tasks: [],
      started: false,
      done: false,
      refused: false,
      settled: Promise.resolve(),
    };
    if (album !== undefined) albums.set(album, unit);
    const waits = message !== undefined && !(fresh && isStop(fresh));
    enqueue(unit, waits ? threadOf(message) : undefined);
    return unit;
  };

  return {
    take(updates) {
      for (const update of [...updates].sort((a, b) => a.update_id - b.update_id)) {
        if (taken.has(update.update_id)) continue;
        taken.set(update.update_id, add(update, false));
        next = update.update_id + 1;
      }
    },

    async replay(updates) {
      const added = new Set<Unit>();
      for (const update of [...updates].sort((a, b) => a.update_id - b.update_id)) {
        added.add(add(update, true));
      }
      await Promise.all([...added].map((unit) => unit.settled));
      return [...added].every((unit) => !unit.refused);
    },

    offset() {
      let first: number | undefined;
      for (const [updateId, unit] of taken) {
        if ((!unit.done || unit.refused) && (first === undefined || updateId < first)) {
          first = updateId;
        }
      }
      const offset = first ?? next;
      // Below the offset Telegram sends nothing again: forget them.
      for (const updateId of taken.keys()) if (updateId < (offset ?? 0)) taken.delete(updateId);
      return offset;
    },

    busy() {
      // A refused one too: Telegram sends it at once again, until the channel stops.
      for (const unit of taken.values()) if (!unit.done || unit.refused) return true;
      return false;
    },

    changed() {
      if (!change) {
        let resolve = () => {};
        const promise = new Promise<void>((r) => {
          resolve = r;
        });
        change = { promise, resolve };
      }
      return change.promise;
    },

    refused(messageId) {
      refusedKeys.add(messageId);
    },

    async settled() {
      while (units.size > 0) await Promise.all([...units].map((unit) => unit.settled));
    },
  };
}

/** Under GUPPY_HOME: where an older guppy kept album parts and the messages held behind them. */
export const HELD_UPDATES_FILE = join("telegram", "held-updates.jsonl");

type HeldRecord = { update: TelegramUpdate } | { done: number };

function isHeldRecord(value: unknown): value is HeldRecord {
  if (value === null || typeof value !== "object") return false;
  const v = value as Record<string, unknown>;
  if ("done" in v) return typeof v.done === "number";
  const update = v.update as Record<string, unknown> | null | undefined;
  return typeof update === "object" && update !== null && typeof update.update_id === "number";
}

/**
 * The updates an older guppy left in `<home>/telegram/held-updates.jsonl` (kept after Telegram
 * had confirmed them, and not handed over since), in update_id order; `clear` removes the file
 * once they are accepted.
 */
export function readHeldUpdates(
  home: string,
  logger: Logger,
): { updates: TelegramUpdate[]; clear(): void } {
  const path = join(home, HELD_UPDATES_FILE);
  const kept = new Map<number, TelegramUpdate>();
  if (existsSync(path)) {
    for (const record of readJsonl(path, logger, isHeldRecord)) {
      if ("update" in record) kept.set(record.update.update_id, record.update);
      else kept.delete(record.done);
    }
  }
  return {
    updates: [...kept.values()].sort((a, b) => a.update_id - b.update_id),
    clear() {
      try {
        if (existsSync(path)) unlinkSync(path);
      } catch (error) {
        logger.warn("telegram: could not remove the held updates file", {
          error: String(error),
          path,
        });
      }
    },
  };
}
