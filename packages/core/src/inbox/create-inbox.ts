import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { readJsonl } from "../fs/jsonl.js";
import { type Logger, silentLogger } from "../logging/logger.js";
import type { Store } from "../store/create-store.js";
import { type InboxJournal, openInboxJournal } from "./inbox-journal.js";
import { lockInbox } from "./inbox-lock.js";
import {
  type AcceptedRecord,
  type InboxOutcome,
  type InboxRecord,
  isInboxRecord,
  type PendingPrompt,
} from "./inbox-record.js";

/** The journal of every thread's prompts, `<home>/inbox.jsonl`. */
export const INBOX_FILE = "inbox.jsonl";
/** Held by the gateway that owns the journal (see inbox-lock.ts). */
export const INBOX_LOCK_FILE = "inbox.lock";
/** The per-thread inbox of earlier versions (`<thread dir>/inbox.jsonl`), imported once. */
const LEGACY_INBOX_FILE = "inbox.jsonl";
/** The journal is compacted (rewritten with only what is still needed) past this size. */
const DEFAULT_COMPACT_BYTES = 1024 * 1024;
/** Progress lines kept for a journal the disk refuses, at most (memory stays bounded). */
const MAX_HELD = 10_000;
const HELD_RETRY_MS = 5000;

/**
 * The durable inbox: one journal for all threads (`<home>/inbox.jsonl`, see inbox-journal.ts) and
 * its index in memory. `accept` is fsync'd before it returns (or, deferred, shares a group
 * commit); progress lines (`tool`, `done`) are plain appends: they survive a killed process, and
 * after a power cut the worst case is a prompt re-run or reported twice. When the journal grows
 * past a size it is rewritten with what is still needed: unanswered prompts with their tool
 * lines, and the ids of answered prompts of threads not yet cleared.
 */
export interface Inbox {
  /**
   * Appends a prompt. With `deferSync` false (the default) it is fsync'd before this returns;
   * with true it is written at the end of the event-loop turn (or at `written()`, whichever comes
   * first; then it survives a killed process) and `synced` resolves once it is fsync'd.
   */
  accept(
    threadId: string,
    record: Omit<AcceptedRecord, "t" | "id" | "at" | "threadId">,
    deferSync?: boolean,
  ): { record: AcceptedRecord; synced?: Promise<void> };
  /**
   * Makes sure the accepted line of `record` is in the journal before its run writes anything
   * (log, context, tool lines): when it is still deferred, the deferred accepts are written now.
   * A prompt that waited for its slot was written at the end of its turn already, with the rest
   * of that turn's: nothing to do. Never throws (a failure is logged, and `synced` of those
   * prompts rejects). False when the line could not be written (a full disk): the prompt is not
   * durable, so it must not run — see `unsaved`.
   */
  written(record: AcceptedRecord): boolean;
  /** Forgets a prompt whose accepted line never reached the journal (`written` said false). */
  unsaved(record: AcceptedRecord): void;
  /**
   * A channel message the thread acted on without a prompt (`/new`, `/compact`, steer, abort): its
   * id is kept like an answered prompt's (a `ran` line, a plain append) until the thread is
   * cleared, so the message delivered again after a restart is recognised. Never throws.
   */
  handled(threadId: string, messageId: string): void;
  tool(threadId: string, id: string, name: string, args: unknown): void;
  done(threadId: string, id: string, outcome: InboxOutcome): void;
  /** Accepted prompts without a `done` line, in the order they were accepted. */
  pending(threadId: string): PendingPrompt[];
  /**
   * The log message ids (`messageId`, else the inbox id) of every prompt of the thread since it
   * was last cleared, answered or not.
   */
  promptIds(threadId: string): string[];
  /**
   * Every unanswered prompt (read at start to replay them), in the order accepted across threads
   * (each record names its thread).
   */
  scan(): PendingPrompt[];
  /**
   * The threads with answered prompts or handled commands not cleared yet and nothing pending: at
   * a start, those no actor will clear unless a message comes to them (see the orchestrator's
   * `start`).
   */
  uncleared(): string[];
  /** Forgets the thread's answered prompts (call only when nothing of it is pending). */
  clear(threadId: string): void;
  /** Syncs what is written and closes the journal (shutdown). */
  close(): void;
}

interface ThreadInbox {
  /** Accepted, no `done` yet, in accept order. */
  pending: Map<string, PendingPrompt>;
  /** Answered since the last clear: inbox id → log message id. */
  ran: Map<string, string>;
}

/**
 * Where a journal lives and the lock its owner holds: by default `<home>/inbox.jsonl` under
 * `<home>/inbox.lock` (the gateway's, for every thread); `guppy chat` keeps its session's in the
 * thread's folder under its `chat.lock`.
 */
export interface InboxLocation {
  file: string;
  /** Takes the lock (throws when another process holds it); returns its release. */
  lock(): () => void;
}

let counter = 0;

// Long by design: one closure per inbox whose methods share the journal and its index.
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
  const threads = new Map<string, ThreadInbox>();
  /**
   * Every thread's pending prompts by inbox id, in the order accepted across threads: what a
   * replay and a compaction follow. (`threads` is in the order of each thread's first line,
   * answered or not: a thread whose running prompt was answered at a shutdown would go first.)
   */
  const pendingInOrder = new Map<string, PendingPrompt>();
  /** Inbox id → thread id, for the `tool` and `done` lines (they carry only the id). */
  const owners = new Map<string, string>();
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
    for (const record of journal.loaded) apply(record);
    const legacy = fresh && !location ? findLegacyInboxes(store.home) : [];
    for (const file of legacy) {
      for (const record of readJsonl(file, logger, isInboxRecord)) apply(record);
    }
    // Start from only what is still needed; then the old per-thread files can go.
    if (journal.size > 0 || legacy.length > 0) journal.rewrite(store.redact(live()));
    for (const file of legacy) rmSync(file, { force: true });
  } catch (error) {
    release();
    throw error;
  }
  let compactAt = Math.max(compactBytes, 2 * journal.size);

  function entry(threadId: string): ThreadInbox {
    let t = threads.get(threadId);
    if (!t) {
      t = { pending: new Map(), ran: new Map() };
      threads.set(threadId, t);
    }
    return t;
  }

  /** Updates the index with one journal line. */
  function apply(record: InboxRecord): void {
    switch (record.t) {
      case "accepted": {
        const p: PendingPrompt = { record, tools: [] };
        entry(record.threadId).pending.set(record.id, p);
        pendingInOrder.set(record.id, p);
        owners.set(record.id, record.threadId);
        return;
      }
      case "tool": {
        const threadId = owners.get(record.id);
        const p = threadId ? threads.get(threadId)?.pending.get(record.id) : undefined;
        p?.tools.push({ name: record.name, args: record.args });
        return;
      }
      case "done": {
        const threadId = owners.get(record.id);
        const t = threadId ? threads.get(threadId) : undefined;
        const p = t?.pending.get(record.id);
        if (!t || !p) return;
        t.pending.delete(record.id);
        pendingInOrder.delete(record.id);
        t.ran.set(record.id, p.record.messageId ?? record.id);
        return;
      }
      case "ran":
        entry(record.threadId).ran.set(record.id, record.messageId ?? record.id);
        owners.set(record.id, record.threadId);
        return;
      case "cleared": {
        const t = threads.get(record.threadId);
        if (!t) return;
        for (const id of t.ran.keys()) owners.delete(id);
        t.ran.clear();
        if (t.pending.size === 0) threads.delete(record.threadId);
        return;
      }
      case "started":
        return;
    }
  }

  /** The journal's content after a compaction: the pending prompts still in the order accepted. */
  function live(): InboxRecord[] {
    const out: InboxRecord[] = [];
    for (const [threadId, t] of threads) {
      for (const [id, messageId] of t.ran) {
        out.push(
          messageId === id ? { t: "ran", id, threadId } : { t: "ran", id, threadId, messageId },
        );
      }
    }
    for (const p of pendingInOrder.values()) {
      out.push(p.record);
      for (const tool of p.tools) {
        out.push({ t: "tool", id: p.record.id, name: tool.name, args: tool.args });
      }
    }
    return out;
  }

  const compactIfLarge = () => {
    if (journal.size < compactAt) return;
    try {
      journal.rewrite(store.redact(live()));
      // The index the new content comes from has the held lines applied.
      held = [];
      compactAt = Math.max(compactBytes, 2 * journal.size);
    } catch (error) {
      logger.warn(`Could not compact the inbox journal ${path}`, { error: String(error) });
      compactAt = journal.size + compactBytes;
    }
  };

  /**
   * Progress lines the journal refused (a full disk), oldest first: written before the next line
   * and every few seconds until they go through. A lost `tool` line would have its prompt run
   * again after a restart (its actions repeated), a lost `done` line its answer replayed.
   */
  let held: InboxRecord[] = [];
  let closed = false;
  let heldTimer: ReturnType<typeof setInterval> | undefined;
  /** Writes the held lines (with `then`, if given, after them); throws when the journal refuses. */
  const writeHeld = (then?: InboxRecord) => {
    if (held.length === 0) {
      if (then) journal.append([then]);
      return;
    }
    journal.append(then ? [...held, then] : held);
    held = [];
    if (heldTimer !== undefined) clearInterval(heldTimer);
    heldTimer = undefined;
    logger.info(`Wrote the inbox lines kept while ${path} could not be written`);
  };
  const hold = (record: InboxRecord, error: unknown) => {
    if (held.length === 0) {
      logger.error(`Could not write the inbox journal ${path}; the line is kept and retried`, {
        error: String(error),
      });
    }
    if (held.length < MAX_HELD) held.push(record);
    if (heldTimer === undefined) {
      heldTimer = setInterval(retryHeld, options.retryMs ?? HELD_RETRY_MS);
      heldTimer.unref?.();
    }
  };
  const retryHeld = () => {
    try {
      writeHeld();
    } catch {
      // Still no room: the timer tries again.
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
        const threadId = owners.get(record.id);
        const accepted = threadId ? threads.get(threadId)?.pending.get(record.id) : undefined;
        const through = accepted ? deferredAs.get(accepted.record) : undefined;
        if (through !== undefined) journal.flush(through);
      }
      writeHeld(record);
    } catch (error) {
      hold(record, error);
    }
    apply(record);
  };

  const newId = () => {
    counter = (counter + 1) % 1_000_000;
    return `in-${Date.now().toString(36)}-${counter.toString(36)}`;
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
      apply(record);
      // It went through: there may be room for the lines held before it.
      if (held.length > 0) retryHeld();
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
      threads.get(record.threadId)?.pending.delete(record.id);
      pendingInOrder.delete(record.id);
      owners.delete(record.id);
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
    pending: (threadId) => [...(threads.get(threadId)?.pending.values() ?? [])],
    promptIds(threadId) {
      const t = threads.get(threadId);
      if (!t) return [];
      return [
        ...t.ran.values(),
        ...[...t.pending.values()].map((p) => p.record.messageId ?? p.record.id),
      ];
    },
    scan: () => [...pendingInOrder.values()],
    uncleared() {
      const out: string[] = [];
      for (const [threadId, t] of threads) {
        if (t.ran.size > 0 && t.pending.size === 0) out.push(threadId);
      }
      return out;
    },
    clear(threadId) {
      const t = threads.get(threadId);
      if (!t || t.ran.size === 0) return;
      progress({ t: "cleared", threadId });
      compactIfLarge();
    },
    close() {
      closed = true;
      if (heldTimer !== undefined) clearInterval(heldTimer);
      heldTimer = undefined;
      try {
        retryHeld();
        journal.close();
      } finally {
        release();
      }
    },
  };
}

/** Non-empty `<home>/<adapter>/<channel>/<thread>/inbox.jsonl` files of earlier versions. */
function findLegacyInboxes(home: string): string[] {
  const out: string[] = [];
  for (const adapter of dirs(home)) {
    if (adapter.startsWith(".")) continue;
    for (const channel of dirs(join(home, adapter))) {
      for (const thread of dirs(join(home, adapter, channel))) {
        const file = join(home, adapter, channel, thread, LEGACY_INBOX_FILE);
        if (statSync(file, { throwIfNoEntry: false })?.isFile()) out.push(file);
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
