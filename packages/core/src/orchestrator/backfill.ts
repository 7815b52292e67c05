import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { AgentMessage } from "@mariozechner/pi-agent-core";
import { overwriteInPlace } from "../fs/write.js";
import type { Store } from "../store/create-store.js";
import { LOG_CURSOR_FILE, type LogEntry } from "../store/thread-layout.js";
import { timeStamp } from "../time/local-time.js";

/**
 * Backfill (seed 002 "Backfill / Sync"): messages a channel logged to the thread's log.jsonl
 * while no agent ran (posts that were not addressed to guppy, posts while guppy was down) are
 * synced into the context before the next run, in order, deduplicated by message id.
 *
 * `<thread dir>/log-cursor` holds how many log.jsonl entries the context has caught up with and,
 * when the cursor stands at the end of what was read, the byte offset there ("count offset"; a
 * reader that takes the first number alone still gets the count). Entries after it that are not
 * guppy's own and not a prompt that runs anyway are backfilled (see `log-tail.ts`).
 */

/** A saved cursor: entries passed, and the byte offset after the last of them when known. */
export interface SavedCursor {
  count: number;
  offset?: number;
}

export function readCursor(store: Store, threadId: string): SavedCursor {
  const file = join(store.threadDir(threadId), LOG_CURSOR_FILE);
  let text: string;
  try {
    // A new thread has none: checked first, as a thrown ENOENT costs more than the stat.
    if (!statSync(file, { throwIfNoEntry: false })?.size) return { count: 0 };
    text = readFileSync(file, "utf8");
  } catch {
    return { count: 0 };
  }
  // The first line only: an older guppy may have written a shorter line over a longer one.
  const [count, offset] = (text.split("\n", 1)[0] ?? "").trim().split(/\s+/).map(Number);
  if (count === undefined || !Number.isSafeInteger(count) || count < 0) return { count: 0 };
  return offset !== undefined && Number.isSafeInteger(offset) && offset > 0
    ? { count, offset }
    : { count };
}

/**
 * A few bytes, overwritten in place at a fixed width and without fsync: it is advisory (a stale
 * cursor after a crash only makes the next run re-check entries that dedup by id excludes), and
 * ext4 flushes a truncate-and-rewrite on close, which would cost milliseconds per run.
 */
export function writeCursor(store: Store, threadId: string, cursor: SavedCursor): void {
  const line = cursor.offset === undefined ? `${cursor.count}` : `${cursor.count} ${cursor.offset}`;
  overwriteInPlace(join(store.threadDir(threadId), LOG_CURSOR_FILE), `${line.padStart(31, " ")}\n`);
}

/**
 * An entry as a line of the message: after the local time it was logged at, in the form a live
 * prompt's stamp has (`[Fri 2026-11-27 09:14 Europe/Berlin]`), so the model reads the times of
 * backfilled and live messages alike and "an hour ago" means the same in both.
 */
const logLine = (e: LogEntry, timeZone: string | undefined) =>
  e.sentFrom !== undefined
    ? `${loggedAt(e.date, timeZone)} I (guppy) sent this here from thread ${e.sentFrom}: ${e.text}`
    : `${loggedAt(e.date, timeZone)} ${e.userName || e.userId}: ${e.text}`;

/** The stamp of a log entry's `date`; a date that is no time (a hand-edited log) as written. */
function loggedAt(date: string, timeZone: string | undefined): string {
  const at = new Date(date);
  return Number.isNaN(at.getTime()) ? `[${date}]` : timeStamp(at, timeZone);
}

/**
 * The backfilled entries as one user message, oldest first, each line stamped with its logged
 * time in `timeZone` (GUPPY_TIMEZONE; absent: the system's).
 */
export function backfillMessage(entries: readonly LogEntry[], timeZone?: string): AgentMessage {
  return {
    role: "user",
    content: `Messages posted in this thread while I was not running (for context; not addressed to me unless they say so):\n${entries.map((e) => logLine(e, timeZone)).join("\n")}`,
    timestamp: Date.now(),
  };
}

/**
 * A prompt whose run guppy's stop cut short (it had run tools, so it was not run again) and the
 * notice the thread got instead of an answer, as one user message in the same form: the killed
 * run may have saved none of it to the context, and the agent's next run should know.
 */
export function interruptedRunMessage(
  prompt: LogEntry,
  notice: LogEntry,
  timeZone?: string,
): AgentMessage {
  return {
    role: "user",
    content: `A message of this thread whose run was interrupted when guppy stopped, and what the thread was told instead of an answer (for context):\n${logLine(prompt, timeZone)}\n${logLine(notice, timeZone)}`,
    timestamp: Date.now(),
  };
}
