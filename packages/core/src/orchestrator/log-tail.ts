import type { Store } from "../store/create-store.js";
import type { LogEntry } from "../store/log-entry.js";
import { readCursor, writeCursor } from "./backfill.js";

/**
 * An active actor's view of its thread's log.jsonl for backfill: read whole once, at the first
 * run after activation, then only the lines appended since — a run's bookkeeping never re-reads
 * the thread's history. Dropped on deactivation (it holds the message ids seen so far).
 */
export interface LogTail {
  /**
   * Entries to backfill before a run: after the cursor, not from guppy, not one of `promptIds`
   * (the prompt about to run and those queued behind it: they reach the context as prompts), and
   * not a message id already seen. The cursor moves past everything read.
   */
  backfill(promptIds: ReadonlySet<string>): LogEntry[];
  /**
   * After a run: the cursor moves past the run's own lines, but not past a message another sender
   * logged meanwhile (it is backfilled next time).
   */
  afterRun(promptId: string): void;
}

export function createLogTail(store: Store, threadId: string): LogTail {
  let cursor = readCursor(store, threadId);
  let offset = 0;
  let count = 0;
  /** Message ids of the entries before the cursor. */
  const seen = new Set<string>();
  /** The entries from the cursor on, in order. */
  let after: LogEntry[] = [];

  const moveCursor = (n: number) => {
    for (let i = 0; i < n; i++) {
      const id = after[i]?.messageId;
      if (id) seen.add(id);
    }
    after = after.slice(n);
    if (n > 0) {
      cursor += n;
      writeCursor(store, threadId, cursor);
    }
  };

  const sync = () => {
    let tail = store.readLogFrom(threadId, offset);
    if ("restart" in tail) {
      // Replaced or truncated under us: start over from the saved cursor.
      offset = 0;
      count = 0;
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

  return {
    backfill(promptIds) {
      sync();
      const picked = new Set<string>();
      const entries = after.filter((entry) => {
        if (entry.isBot) return false;
        const id = entry.messageId;
        if (id && (seen.has(id) || picked.has(id) || promptIds.has(id))) return false;
        if (id) picked.add(id);
        return true;
      });
      moveCursor(after.length);
      return entries;
    },
    afterRun(promptId) {
      sync();
      const stop = after.findIndex((e) => !e.isBot && e.messageId !== promptId);
      moveCursor(stop === -1 ? after.length : stop);
    },
  };
}
