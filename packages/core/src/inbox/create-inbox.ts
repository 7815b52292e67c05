import { existsSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { readJsonl } from "../fs/jsonl.js";
import { type Logger, silentLogger } from "../logging/logger.js";
import type { Store } from "../store/create-store.js";
import { HeldLines } from "./held-lines.js";
import { InboxIndex } from "./inbox-index.js";
import { type InboxJournal, openInboxJournal } from "./inbox-journal.js";
import { lockInbox } from "./inbox-lock.js";
import { type AcceptedRecord, type InboxRecord, isInboxRecord } from "./inbox-record.js";
import { findLegacyInboxes } from "./legacy-inbox.js";
import type { Inbox, InboxLocation } from "./types.js";

export type { Inbox, InboxLocation } from "./types.js";

/** The journal of every thread's prompts, `<home>/inbox.jsonl`. */
export const INBOX_FILE = "inbox.jsonl";
/** Held by the gateway that owns the journal (see inbox-lock.ts). */
export const INBOX_LOCK_FILE = "inbox.lock";
/** The journal is compacted (rewritten with only what is still needed) past this size. */
const DEFAULT_COMPACT_BYTES = 1024 * 1024;

let counter = 0;

const newId = () => {
  counter = (counter + 1) % 1_000_000;
  return `in-${Date.now().toString(36)}-${counter.toString(36)}`;
};

/**
 * Opens the durable inbox (see `Inbox`): takes its lock, reads the journal into the index
 * (importing the per-thread inboxes of earlier versions into a fresh home journal) and starts
 * it again from only what is still needed.
 */
export function createInbox(options: {
  store: Store;
  logger?: Logger;
  /** Compaction threshold in bytes (tests use a small one). */
  compactBytes?: number;
  /** Another journal than the home's (no legacy per-thread inboxes are imported into it). */
  location?: InboxLocation;
  /** How often progress lines a full disk refused are tried again (ms; default 5 s). */
  retryMs?: number;
}): Inbox {
  const { store, location } = options;
  const logger = options.logger ?? silentLogger;
  const path = location?.file ?? join(store.home, INBOX_FILE);
  const compactBytes = options.compactBytes ?? DEFAULT_COMPACT_BYTES;
  const index = new InboxIndex();
  /** An accept whose line was deferred → its number among the journal's deferred appends. */
  const deferredAs = new WeakMap<AcceptedRecord, number>();

  mkdirSync(dirname(path), { recursive: true });
  const release = location
    ? location.lock()
    : lockInbox(join(store.home, INBOX_LOCK_FILE), store.home);
  let journal: InboxJournal;
  try {
    const fresh = !existsSync(path);
    journal = openInboxJournal(path, logger);
    for (const record of journal.loaded) index.apply(record);
    const legacy = fresh && !location ? findLegacyInboxes(store.home) : [];
    for (const file of legacy) {
      for (const record of readJsonl(file, logger, isInboxRecord)) index.apply(record);
    }
    // Start from only what is still needed; then the old per-thread files can go.
    if (journal.size > 0 || legacy.length > 0) journal.rewrite(store.redact(index.live()));
    for (const file of legacy) rmSync(file, { force: true });
  } catch (error) {
    release();
    throw error;
  }
  let compactAt = Math.max(compactBytes, 2 * journal.size);
  const held = new HeldLines(journal, path, logger, options.retryMs);
  let closed = false;

  const compactIfLarge = () => {
    if (journal.size < compactAt) return;
    try {
      journal.rewrite(store.redact(index.live()));
      // The index the new content comes from has the held lines applied.
      held.drop();
      compactAt = Math.max(compactBytes, 2 * journal.size);
    } catch (error) {
      logger.warn(`Could not compact the inbox journal ${path}`, { error: String(error) });
      compactAt = journal.size + compactBytes;
    }
  };

  /**
   * A progress line: written (after its prompt's accepted line, when that is still deferred, and
   * after the lines held before it), applied, never thrown (the run goes on either way).
   */
  const progress = (record: Extract<InboxRecord, { t: "tool" | "done" | "ran" | "cleared" }>) => {
    // After `close` (an answer saved late, at shutdown): the next start reads the journal as is.
    if (closed) return;
    try {
      if (record.t === "tool" || record.t === "done") {
        const accepted = index.pendingPrompt(record.id);
        const through = accepted ? deferredAs.get(accepted.record) : undefined;
        if (through !== undefined) journal.flush(through);
      }
      held.write(record);
    } catch (error) {
      held.hold(record, error);
    }
    index.apply(record);
  };

  return {
    accept(threadId, fields, deferSync = false) {
      const record: AcceptedRecord = {
        t: "accepted",
        id: newId(),
        threadId,
        at: new Date().toISOString(),
        ...fields,
      };
      let synced: Promise<void> | undefined;
      // The journal's copy without configured secrets; the run gets the prompt as sent (its
      // requests are redacted on the way out).
      const written = store.redact(record);
      if (deferSync) {
        synced = journal.appendDeferred([written]);
        deferredAs.set(record, journal.deferred);
      } else journal.appendSynced([written]);
      index.apply(record);
      // It went through: there may be room for the lines held before it.
      if (held.size > 0) held.retry();
      return synced ? { record, synced } : { record };
    },
    written(record) {
      const through = deferredAs.get(record);
      if (through === undefined) return true;
      deferredAs.delete(record);
      try {
        journal.flush(through);
      } catch (error) {
        logger.error(`Could not write the inbox journal ${path}`, { error: String(error) });
      }
      return !journal.lost(through);
    },
    unsaved(record) {
      index.forget(record.threadId, record.id);
    },
    handled(threadId, messageId) {
      progress({ t: "ran", id: newId(), threadId, messageId });
    },
    tool(_threadId, id, name, args) {
      let text: string;
      try {
        text = typeof args === "string" ? args : JSON.stringify(args);
      } catch {
        text = String(args);
      }
      progress({ t: "tool", id, name, args: text.length > 200 ? `${text.slice(0, 199)}…` : text });
    },
    done(_threadId, id, outcome) {
      progress({ t: "done", id, at: new Date().toISOString(), outcome });
      compactIfLarge();
    },
    pending: (threadId) => index.pending(threadId),
    promptIds: (threadId) => index.promptIds(threadId),
    scan: () => index.scan(),
    uncleared: () => index.uncleared(),
    clear(threadId) {
      if (!index.hasRan(threadId)) return;
      progress({ t: "cleared", threadId });
      compactIfLarge();
    },
    close() {
      closed = true;
      held.stopRetrying();
      try {
        held.retry();
        journal.close();
      } finally {
        release();
      }
    },
  };
}
