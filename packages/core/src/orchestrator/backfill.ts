import { closeSync, openSync, readFileSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { AgentMessage } from "@mariozechner/pi-agent-core";
import type { Store } from "../store/create-store.js";
import type { LogEntry } from "../store/log-entry.js";

/**
 * Backfill (seed 002 "Backfill / Sync"): messages a channel logged to the thread's log.jsonl
 * while no agent ran (posts that were not addressed to guppy, posts while guppy was down) are
 * synced into the context before the next run, in order, deduplicated by message id.
 *
 * `<thread dir>/log-cursor` holds how many log.jsonl entries the context has caught up with.
 * Entries after it that are not guppy's own and not a prompt that runs anyway are backfilled
 * (see `log-tail.ts`).
 */
export const LOG_CURSOR_FILE = "log-cursor";

export function readCursor(store: Store, threadId: string): number {
  const file = join(store.threadDir(threadId), LOG_CURSOR_FILE);
  let text: string;
  try {
    // A new thread has none: checked first, as a thrown ENOENT costs more than the stat.
    if (!statSync(file, { throwIfNoEntry: false })?.size) return 0;
    text = readFileSync(file, "utf8");
  } catch {
    return 0;
  }
  const n = Number.parseInt(text.trim(), 10);
  return Number.isFinite(n) && n >= 0 ? n : 0;
}

/**
 * A few bytes, overwritten in place at a fixed width and without fsync: it is advisory (a stale
 * cursor after a crash only makes the next run re-check entries that dedup by id excludes), and
 * ext4 flushes a truncate-and-rewrite on close, which would cost milliseconds per run.
 */
export function writeCursor(store: Store, threadId: string, cursor: number): void {
  const file = join(store.threadDir(threadId), LOG_CURSOR_FILE);
  let fd: number;
  try {
    fd = openSync(file, "r+");
  } catch {
    fd = openSync(file, "w");
  }
  try {
    writeSync(fd, `${String(cursor).padStart(15, " ")}\n`, 0, "utf8");
  } finally {
    closeSync(fd);
  }
}

/** The backfilled entries as one user message, oldest first. */
export function backfillMessage(entries: readonly LogEntry[]): AgentMessage {
  const lines = entries.map((e) => `[${e.date}] ${e.userName || e.userId}: ${e.text}`);
  return {
    role: "user",
    content: `Messages posted in this thread while I was not running (for context; not addressed to me unless they say so):\n${lines.join("\n")}`,
    timestamp: Date.now(),
  };
}
