import { closeSync, openSync, readFileSync, writeSync } from "node:fs";
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
 * Entries after it that are not guppy's own and not a prompt that runs anyway are backfilled.
 */
export const LOG_CURSOR_FILE = "log-cursor";

export interface BackfillPlan {
  entries: LogEntry[];
  /** The cursor to save once the entries are in the context. */
  cursor: number;
}

export function readCursor(store: Store, threadId: string): number {
  const file = join(store.threadDir(threadId), LOG_CURSOR_FILE);
  let text: string;
  try {
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

/**
 * Entries to backfill before a run: after the cursor, not from guppy, not one of `promptIds`
 * (the prompt about to run and those queued behind it: they reach the context as prompts), and
 * not a message id already seen before the cursor or earlier in the list.
 */
export function planBackfill(
  log: readonly LogEntry[],
  cursor: number,
  promptIds: ReadonlySet<string>,
): BackfillPlan {
  const start = Math.min(cursor, log.length);
  const seen = new Set<string>();
  for (let i = 0; i < start; i++) {
    const id = log[i]?.messageId;
    if (id) seen.add(id);
  }
  const entries: LogEntry[] = [];
  for (let i = start; i < log.length; i++) {
    const entry = log[i];
    if (!entry || entry.isBot) continue;
    if (entry.messageId && (seen.has(entry.messageId) || promptIds.has(entry.messageId))) continue;
    if (entry.messageId) seen.add(entry.messageId);
    entries.push(entry);
  }
  return { entries, cursor: log.length };
}

/**
 * Where the cursor goes after a run whose prompt was logged at `promptIndex`: past the run's own
 * lines, but not past a message another sender logged during the run (it is backfilled next time).
 */
export function cursorAfterRun(
  log: readonly LogEntry[],
  promptIndex: number,
  promptId: string,
): number {
  for (let i = promptIndex; i < log.length; i++) {
    const entry = log[i];
    if (entry && !entry.isBot && entry.messageId !== promptId) return i;
  }
  return log.length;
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
