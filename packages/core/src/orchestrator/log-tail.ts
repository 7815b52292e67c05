import { statSync } from "node:fs";
import type { Inbox } from "../inbox/create-inbox.js";
import type { Logger } from "../logging/logger.js";
import type { Store } from "../store/create-store.js";
import type { LogEntry } from "../store/thread-layout.js";
import { readCursor, writeCursor } from "./backfill.js";

/**
 * An active actor's view of its thread's log.jsonl for backfill: read once at the first run after
 * activation — from the saved cursor's byte offset when the cursor file has one (with a window
 * before it, for recent message ids), else whole — then only the lines appended since: a run's
 * bookkeeping never re-reads the thread's history. Dropped on deactivation (it holds the message
 * ids seen so far).
 *
 * The cursor file is written when a backfill happened and by `save` (deactivation, shutdown), not
 * after every run: the lines a run logs are known in memory (`afterRun`). After a crash the saved
 * cursor may be behind those runs' lines; their prompts are still in the thread's inbox (it is
 * cleared only after `save`), and `ranBefore` passes those ids in so they are not backfilled.
 */
export interface LogTail {
  /**
   * Entries to backfill before a run: after the cursor, not from guppy, not a prompt that ran or
   * runs (`promptIds`: the one about to run and those queued behind it), and not a message id
   * already seen. The cursor moves past everything read. `limit`: at most that many, the newest
   * (GUPPY_GROUP_BACKFILL_MESSAGES: a busy group's day must not fill the context).
   */
  backfill(promptIds: ReadonlySet<string>, limit?: number): LogEntry[];
  /** Whether an entry with this message id was read from the log (call after `backfill`). */
  logged(messageId: string): boolean;
  /** A prompt ran: its log lines are part of the context, never backfilled. No file work. */
  afterRun(promptId: string): void;
  /**
   * Saves the cursor past the runs' own lines, but not past a message another sender logged
   * after them (it is backfilled next time).
   */
  save(): void;
}

export function createLogTail(
  store: Store,
  threadId: string,
  ranBefore: Iterable<string> = [],
): LogTail {
  const start = readCursor(store, threadId);
  let cursor = start.count;
  let saved = cursor;
  let offset = 0;
  let count = 0;
  /** Message ids of the entries before the cursor (of the last window of them, on a resume). */
  const seen = new Set<string>();
  // Where the saved cursor stands is known: resume there instead of reading (and holding the
  // ids of) the whole history — a long-lived chat's log is megabytes. The entries just before it
  // are read for their ids, so a message delivered again is still recognised.
  if (start.offset !== undefined && cursor > 0) {
    const recent = store.readLogBefore(threadId, start.offset);
    if (recent !== undefined) {
      offset = start.offset;
      count = cursor;
      for (const entry of recent) if (entry.messageId) seen.add(entry.messageId);
    }
  }
  /** Prompts that ran whose log lines the cursor has not passed yet. */
  const ran = new Set<string>(ranBefore);
  /** The entries from the cursor on, in order. */
  let after: LogEntry[] = [];

  const moveCursor = (n: number, write: boolean) => {
    for (let i = 0; i < n; i++) {
      const id = after[i]?.messageId;
      if (id) {
        seen.add(id);
        ran.delete(id);
      }
    }
    after = after.slice(n);
    cursor += n;
    if (write && cursor !== saved) {
      // Past everything read, the cursor stands at `offset`, which the next tail resumes from.
      writeCursor(
        store,
        threadId,
        after.length === 0 ? { count: cursor, offset } : { count: cursor },
      );
      saved = cursor;
    }
  };

  const sync = () => {
    let tail = store.readLogFrom(threadId, offset);
    if ("restart" in tail) {
      // Replaced or truncated under us: start over from the saved cursor.
      offset = 0;
      count = 0;
      cursor = saved;
      seen.clear();
      after = [];
      tail = store.readLogFrom(threadId, 0);
      if ("restart" in tail) return;
    }
    for (const entry of tail.records) {
      if (count < cursor) {
        if (entry.messageId) seen.add(entry.messageId);
      } else after.push(entry);
      count++;
    }
    offset = tail.end;
    if (cursor > count) cursor = count;
  };

  /**
   * Not guppy's and not a prompt that ran: a message posted beside the runs. guppy's message sent
   * here from another thread's run (`sentFrom`) counts too: no run of this thread said it.
   */
  const foreign = (entry: LogEntry) =>
    (!entry.isBot || entry.sentFrom !== undefined) &&
    !(entry.messageId !== undefined && ran.has(entry.messageId));

  return {
    backfill(promptIds, limit) {
      sync();
      const picked = new Set<string>();
      const entries = after.filter((entry) => {
        if (!foreign(entry)) return false;
        const id = entry.messageId;
        if (id && (seen.has(id) || picked.has(id) || promptIds.has(id))) return false;
        if (id) picked.add(id);
        return true;
      });
      // What was backfilled is in the context now: the cursor must not fall behind it.
      moveCursor(after.length, entries.length > 0);
      return limit !== undefined && entries.length > limit ? entries.slice(-limit) : entries;
    },
    logged(messageId) {
      return seen.has(messageId) || after.some((entry) => entry.messageId === messageId);
    },
    afterRun(promptId) {
      ran.add(promptId);
    },
    save() {
      sync();
      const stop = after.findIndex(foreign);
      moveCursor(stop === -1 ? after.length : stop, true);
    },
  };
}

/**
 * Writes the thread's log cursor past its runs' lines; false when that failed. With no tail (no
 * prompt of it ran since its actor was made), one is made when the inbox holds ids of the thread:
 * after a killed process the saved cursor may be behind the lines of prompts answered before,
 * which the inbox keeps out of backfill only until the thread is cleared. A cursor already at
 * the log's end is not rewritten.
 */
export function saveCursor(
  store: Store,
  inbox: Pick<Inbox, "promptIds">,
  threadId: string,
  log: LogTail | undefined,
  logger: Logger,
): boolean {
  try {
    if (log) log.save();
    else if (inbox.promptIds(threadId).length > 0 && !cursorAtEnd(store, threadId)) {
      createLogTail(store, threadId, inbox.promptIds(threadId)).save();
    }
    return true;
  } catch (error) {
    logger.warn(`Could not save the log cursor of ${threadId}`, { error: String(error) });
    return false;
  }
}

/** Whether the thread's saved log cursor stands at the end of its log.jsonl, or it has none. */
function cursorAtEnd(store: Store, threadId: string): boolean {
  const size = statSync(store.logFile(threadId), { throwIfNoEntry: false })?.size ?? 0;
  return size === 0 || readCursor(store, threadId).offset === size;
}
