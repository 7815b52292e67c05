import { close, closeSync, fstatSync, fsync, fsyncSync, openSync } from "node:fs";
import { dirname } from "node:path";
import { endsTorn, serializeJsonl, syncDirectory } from "../fs/durable-append.js";
import { readJsonl } from "../fs/jsonl.js";
import { appendFully, appendWasUndone, fileWriteError, writeFileAtomic } from "../fs/write.js";
import type { Logger } from "../logging/logger.js";
import { type InboxRecord, isInboxRecord } from "./inbox-record.js";

/**
 * One append-only JSON-lines file for the inbox of every thread, kept open. `append` writes
 * whole lines (they survive a killed process); `appendSynced` also fsyncs before it returns, and
 * `appendDeferred` returns a promise that resolves once the lines are on disk — with group
 * commit: its lines are written at the end of the event-loop turn, all of the turn's in one write
 * (or sooner: `flush`, and before an `appendSynced` line, so accepts keep the order of the calls;
 * an `append` line may go ahead of them — order matters only among one prompt's lines, which
 * the inbox keeps by writing a prompt's accept before anything of its run), and one fsync
 * runs at a time, the accepts written while it runs sharing the next one, so a burst of prompts
 * costs a few writes and fsyncs, not one each (on a real disk an fsync outlasts many turns), and
 * the event loop never waits on the disk. `rewrite` replaces the content atomically (compaction)
 * and resolves every waiting promise, as the new file is synced. A write the disk takes only
 * part of (it is full) fails like any other — the accepts in it are refused or their promises
 * reject, never acknowledged — and what got out is cut off again, so the next line is never glued
 * to a half one.
 */
export interface InboxJournal {
  /** The records on disk when the journal was opened (a torn or invalid line skipped). */
  readonly loaded: InboxRecord[];
  /** Bytes in the file now. */
  readonly size: number;
  append(records: readonly InboxRecord[]): void;
  appendSynced(records: readonly InboxRecord[]): void;
  appendDeferred(records: readonly InboxRecord[]): Promise<void>;
  /** How many `appendDeferred` calls there were so far: the number of the last one. */
  readonly deferred: number;
  /**
   * Writes the deferred lines still waiting for the turn's end now (not fsync'd) — unless
   * `through` is given and the `through`th deferred append (so every one before it) was written.
   */
  flush(through?: number): void;
  /**
   * Whether the `n`th deferred append was lost: its write failed (a full disk), so its lines are
   * not in the file. (Kept for the most recent failures only; an old number reads false.)
   */
  lost(n: number): boolean;
  rewrite(records: readonly InboxRecord[]): void;
  close(): void;
}

export interface InboxJournalOptions {
  /** node:fs `fsync` unless given (tests: a disk whose fsync completes when they say). */
  fsync?: (fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => void;
}

// Long by design: one closure per journal whose methods share its descriptor and group commit.
export function openInboxJournal(
  path: string,
  logger: Logger,
  options: InboxJournalOptions = {},
): InboxJournal {
  const fsyncAsync = options.fsync ?? fsync;
  const loaded = readJsonl(path, logger, isInboxRecord);
  let fd = -1;
  let size = 0;
  /** The directory entry is not known to be on disk yet (the file was just created). */
  let created = false;
  let torn = false;
  /** Makes `next` (the file at `path`, opened for append) the journal's descriptor. */
  const adopt = (next: number) => {
    fd = next;
    size = fstatSync(fd).size;
    created = size === 0;
    torn = endsTorn(fd, size);
  };
  adopt(openSync(path, "a+"));
  type Waiter = { resolve: () => void; reject: (error: Error) => void };
  /** Lines written whose fsync has not started yet. */
  let waiting: Waiter[] = [];
  /** `appendDeferred` lines of this turn not written yet, and who waits on them. */
  let unwritten = "";
  let unwrittenWaiters: Waiter[] = [];
  /** `appendDeferred` calls so far, and how many of them were written (or failed to be). */
  let deferred = 0;
  let deferredWritten = 0;
  /** Ranges [from, to] of deferred appends whose write failed (the latest few). */
  let lostRanges: Array<[number, number]> = [];
  let scheduled = false;
  /**
   * The fd of the one fsync running, if any: lines written meanwhile wait for it to end. An fd
   * replaced while its fsync runs is closed when it ends (`retired`).
   */
  let syncingFd: number | undefined;
  let retired: number | undefined;
  let closed = false;

  const retire = (old: number) => {
    if (old === syncingFd) retired = old;
    else closeSync(old);
  };
  /** Resolves (or rejects) the waiting lines the last fsync covered. */
  const settle = (batch: typeof waiting, error?: Error | null) => {
    for (const w of batch) {
      if (error) w.reject(error);
      else w.resolve();
    }
  };
  /** Every line written so far is on disk: settles all that wait. */
  const settleAll = (error?: Error) => {
    const batch = waiting;
    waiting = [];
    settle(batch, error);
  };
  const syncDirectoryOnce = () => {
    if (!created) return;
    syncDirectory(dirname(path));
    created = false;
  };

  /**
   * `checkLinks`: first make sure the file is still the one at `path` (accepts check; progress
   * lines do not: they matter only beside the accepted line, which the next accept re-creates).
   */
  const write = (text: string, checkLinks = true) => {
    if (text === "") return;
    if (closed) throw new Error("the inbox journal is closed");
    if (checkLinks && fstatSync(fd).nlink === 0) {
      // Removed or replaced behind guppy's back: appends to it would go nowhere.
      logger.warn(`The inbox journal ${path} was removed while guppy ran: it is written anew`);
      // Opened before the old one is let go: if this throws, `fd` still names an open file.
      const fresh = openSync(path, "a+");
      retire(fd);
      adopt(fresh);
    }
    try {
      size += appendFully(fd, (torn ? "\n" : "") + text);
    } catch (error) {
      // A full disk: nothing of these lines may count as written (their accepts fail), and the
      // next line must not be glued to a half one. The part that got out is cut off again; if
      // even that fails, the next write starts with a newline.
      if (!appendWasUndone(error)) torn = true;
      throw fileWriteError("Could not write", path, error);
    }
    torn = false;
  };

  /**
   * Writes this turn's deferred lines (checking the file is still the one at `path`) ahead of
   * `then` (lines of another kind, in the same write). When the write fails, whoever waits on the
   * deferred lines gets the error, and it is thrown.
   */
  const flush = (then = "", checkThen = false) => {
    if (unwritten === "") {
      write(then, checkThen);
      return;
    }
    const text = unwritten + then;
    const waiters = unwrittenWaiters;
    unwritten = "";
    unwrittenWaiters = [];
    const from = deferredWritten + 1;
    deferredWritten = deferred;
    try {
      write(text);
    } catch (error) {
      lostRanges = [...lostRanges.slice(-15), [from, deferred]];
      settle(waiters, error as Error);
      throw error;
    }
    for (const w of waiters) waiting.push(w);
  };

  /** The end of a turn with deferred lines: they are written, and their fsync starts if it can. */
  const endTurn = () => {
    scheduled = false;
    try {
      flush();
    } catch (error) {
      // Their waiters have the error; the next line written tries the file again.
      logger.error(`Could not write the inbox journal ${path}`, { error: String(error) });
    }
    startSync();
  };

  const startSync = () => {
    if (syncingFd !== undefined || waiting.length === 0) return;
    const batch = waiting;
    waiting = [];
    const target = fd;
    syncingFd = target;
    fsyncAsync(target, (error) => {
      syncingFd = undefined;
      if (retired === target) {
        retired = undefined;
        close(target, () => {});
      }
      if (!error && target === fd) syncDirectoryOnce();
      settle(batch, error);
      // What was written while this one ran goes in the next.
      if (!closed) startSync();
    });
  };

  return {
    loaded,
    get size() {
      return size;
    },
    // Progress lines (tool, done): no check that the file is still at the path, and the turn's
    // deferred accepts are left for the turn's end (the check and one write for all of them).
    append: (records) => write(serializeJsonl(records), false),
    appendSynced(records) {
      flush(serializeJsonl(records), true);
      fsyncSync(fd);
      syncDirectoryOnce();
      // The deferred lines written with these are on disk too.
      settleAll();
    },
    appendDeferred(records) {
      if (closed) throw new Error("the inbox journal is closed");
      unwritten += serializeJsonl(records);
      deferred++;
      return new Promise<void>((resolve, reject) => {
        unwrittenWaiters.push({ resolve, reject });
        // Once per event-loop turn: every accept of the turn shares the write and the fsync.
        if (!scheduled) {
          scheduled = true;
          setImmediate(endTurn);
        }
      });
    },
    get deferred() {
      return deferred;
    },
    flush(through) {
      if (through === undefined || deferredWritten < through) flush();
    },
    lost: (n) => lostRanges.some(([from, to]) => n >= from && n <= to),
    rewrite(records) {
      if (closed) throw new Error("the inbox journal is closed");
      // When this fails (a disk too full for the new file) the old file is untouched and this
      // turn's deferred lines are still to be written to it.
      writeFileAtomic(path, serializeJsonl(records));
      // The index the records come from has this turn's deferred lines: the new file holds them.
      waiting.push(...unwrittenWaiters);
      unwritten = "";
      unwrittenWaiters = [];
      deferredWritten = deferred;
      syncDirectory(dirname(path));
      retire(fd);
      adopt(openSync(path, "a+"));
      created = false; // its directory was just synced
      // Everything written so far is in the new file, which is on disk.
      settleAll();
    },
    close() {
      if (closed) return;
      try {
        flush();
        if (waiting.length > 0) fsyncSync(fd);
        settleAll();
      } catch (error) {
        settleAll(error as Error);
      } finally {
        closed = true;
        retire(fd);
      }
    },
  };
}
