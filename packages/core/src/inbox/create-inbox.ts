import { existsSync, readdirSync, statSync, truncateSync } from "node:fs";
import { join } from "node:path";
import { type Logger, silentLogger } from "../logging/logger.js";
import type { Store } from "../store/create-store.js";
import { appendLinesDurably, forgetAppendState, type SyncMode } from "../store/durable-append.js";
import { readJsonl } from "../store/jsonl.js";
import {
  type AcceptedRecord,
  type InboxOutcome,
  type InboxRecord,
  isInboxRecord,
  type PendingPrompt,
} from "./inbox-record.js";

export const INBOX_FILE = "inbox.jsonl";

/**
 * The durable inbox: one `inbox.jsonl` per thread directory. `accept` is fsync'd before it
 * returns; progress lines (`tool`, `done`) are plain appends (they survive a killed
 * process; after a power cut the worst case is a prompt re-run or reported twice). The file is
 * emptied once every prompt in it is done and the thread goes idle.
 */
export interface Inbox {
  /**
   * Appends a prompt. With `deferSync` false (the default) it is fsync'd before this returns;
   * with true it is written (it survives a killed process) and `synced` resolves once fsync'd.
   */
  accept(
    threadId: string,
    record: Omit<AcceptedRecord, "t" | "id" | "at" | "threadId">,
    deferSync?: boolean,
  ): { record: AcceptedRecord; synced?: Promise<void> };
  tool(threadId: string, id: string, name: string, args: unknown): void;
  done(threadId: string, id: string, outcome: InboxOutcome): void;
  /** Accepted prompts without a `done` line, in the order they were accepted. */
  pending(threadId: string): PendingPrompt[];
  /**
   * The log message ids (`messageId`, else the inbox id) of every prompt in the thread's inbox,
   * answered or not: the prompts since the thread was last deactivated cleanly.
   */
  promptIds(threadId: string): string[];
  /** Every inbox on disk with its pending prompts (read at start to replay them). */
  scan(): Array<{ threadId: string; pending: PendingPrompt[] }>;
  /** Empties the thread's inbox file (call only when nothing in it is pending). */
  clear(threadId: string): void;
}

let counter = 0;

export function createInbox(options: { store: Store; logger?: Logger }): Inbox {
  const { store } = options;
  const logger = options.logger ?? silentLogger;
  const path = (threadId: string) => join(store.threadDir(threadId), INBOX_FILE);
  const append = (threadId: string, record: InboxRecord, mode: SyncMode) =>
    appendLinesDurably(join(store.ensureThreadDir(threadId), INBOX_FILE), [record], mode);
  const progress = (threadId: string, record: InboxRecord) => {
    try {
      append(threadId, record, "none");
    } catch (error) {
      logger.error(`Could not write the inbox of ${threadId}`, { error: String(error) });
    }
  };

  return {
    accept(threadId, fields, deferSync = false) {
      counter = (counter + 1) % 1_000_000;
      const record: AcceptedRecord = {
        t: "accepted",
        id: `in-${Date.now().toString(36)}-${counter.toString(36)}`,
        threadId,
        at: new Date().toISOString(),
        ...fields,
      };
      const synced = append(threadId, record, deferSync ? "deferred" : "now");
      return synced ? { record, synced } : { record };
    },
    tool(threadId, id, name, args) {
      let text: string;
      try {
        text = typeof args === "string" ? args : JSON.stringify(args);
      } catch {
        text = String(args);
      }
      progress(threadId, {
        t: "tool",
        id,
        name,
        args: text.length > 200 ? `${text.slice(0, 199)}…` : text,
      });
    },
    done: (threadId, id, outcome) => progress(threadId, { t: "done", id, at: now(), outcome }),
    pending: (threadId) => readPending(path(threadId)),
    promptIds(threadId) {
      const ids: string[] = [];
      for (const record of readRecords(path(threadId))) {
        if (record.t === "accepted") ids.push(record.messageId ?? record.id);
      }
      return ids;
    },
    scan() {
      const out: Array<{ threadId: string; pending: PendingPrompt[] }> = [];
      for (const file of findInboxFiles(store.home)) {
        const pending = readPending(file);
        const threadId = pending[0]?.record.threadId;
        if (threadId) out.push({ threadId, pending });
        else empty(file);
      }
      return out;
    },
    clear(threadId) {
      try {
        empty(path(threadId));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
        logger.warn(`Could not empty the inbox of ${threadId}`, { error: String(error) });
      }
    },
  };

  function readRecords(file: string): InboxRecord[] {
    return existsSync(file) ? readJsonl(file, logger, isInboxRecord) : [];
  }

  function readPending(file: string): PendingPrompt[] {
    const byId = new Map<string, PendingPrompt>();
    for (const record of readRecords(file)) {
      if (record.t === "accepted") {
        byId.set(record.id, { record, tools: [] });
        continue;
      }
      const entry = byId.get(record.id);
      if (!entry) continue;
      if (record.t === "started") continue;
      if (record.t === "tool") entry.tools.push({ name: record.name, args: record.args });
      else byId.delete(record.id);
    }
    return [...byId.values()];
  }
}

/**
 * Empties an inbox file rather than removing it: the thread's next prompt appends to it instead of
 * creating a file (file creation and removal are journal operations that stall behind fsyncs).
 */
function empty(file: string): void {
  forgetAppendState(file);
  truncateSync(file, 0);
}

/** Non-empty `<home>/<adapter>/<channel>/<thread>/inbox.jsonl` files. */
function findInboxFiles(home: string): string[] {
  const out: string[] = [];
  for (const adapter of dirs(home)) {
    if (adapter.startsWith(".")) continue;
    for (const channel of dirs(join(home, adapter))) {
      for (const thread of dirs(join(home, adapter, channel))) {
        const file = join(home, adapter, channel, thread, INBOX_FILE);
        // An empty inbox (every prompt answered) has nothing to replay.
        if ((statSync(file, { throwIfNoEntry: false })?.size ?? 0) > 0) out.push(file);
      }
    }
  }
  return out;
}

function dirs(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
  } catch {
    return [];
  }
}

const now = () => new Date().toISOString();
