import type { LogEntry, ThreadLogReader } from "../state/types.js";
import { matchQuery, rawLineFilter, type SearchQuery } from "./search-query.js";
import type { SearchHit, SearchScope } from "./types.js";

// guppy's own record of what was said: each thread's log (people's messages and guppy's answers,
// no tool output), read through the state seam. Read newest first, thread by thread, the most
// recently written first, until the search has its `limit` of matches and no older log can hold
// a newer one.

/** A thread with a log and when it was last written. */
interface ThreadLog {
  threadId: string;
  /** Epoch ms of its last write: no entry in it is newer (give or take the clock). */
  modified: number;
}

/**
 * The logs a search of `threadId` reads: its own, or for scope `channel` those of every thread
 * of its channel, the most recently written first. A subagent's thread is part of its parent's
 * conversation, not a thread of the channel: it searches its parent's.
 */
export async function threadLogs(
  log: ThreadLogReader,
  threadId: string,
  scope: SearchScope,
): Promise<ThreadLog[]> {
  const ids = scope === "thread" ? [threadId] : await log.channelThreads(threadId);
  const logs = await Promise.all(
    ids.map(async (id) => {
      const modified = await log.lastWritten(id);
      return modified === undefined ? undefined : { threadId: id, modified };
    }),
  );
  return logs
    .filter((found): found is ThreadLog => found !== undefined)
    .sort((a, b) => b.modified - a.modified);
}

/** What `searchLogs` found. */
export interface LogSearch {
  /** The newest `limit` matches, newest first. */
  hits: SearchHit[];
  /** The message id of the line left out as the prompt under way (see `current`), if any. */
  skipped?: string;
}

/**
 * The newest `limit` messages of `logs` that match `query`, newest first. A file is read only
 * while it may still hold a match newer than the `limit`th found so far. Unreadable lines (a torn
 * write) are passed over. The newest line from a person in thread `current` is left out: it is
 * the prompt being answered (logged as its run starts), which the model has before it — a search
 * for words of the question would otherwise find the question first.
 */
export async function searchLogs(
  log: ThreadLogReader,
  logs: readonly ThreadLog[],
  query: SearchQuery,
  limit: number,
  options: { current?: string; signal?: AbortSignal } = {},
): Promise<LogSearch> {
  let hits: SearchHit[] = [];
  let skipped: string | undefined;
  const cutoff = () => (hits.length < limit ? -Infinity : (hits[limit - 1]?.time ?? -Infinity));
  // A log's lines are dated when written, a moment before the file's time: a second's slack.
  const SLACK_MS = 1000;
  const mayMatch = rawLineFilter(query);
  for (const thread of logs) {
    // Sorted newest first: once a log is older than the `limit`th hit, so are the rest.
    if (thread.modified + SLACK_MS < cutoff()) break;
    let skipPrompt = thread.threadId === options.current;
    let found = 0;
    // Most entries do not match: those are not parsed, but for the prompt still to be found.
    const entries = log.newestFirst(thread.threadId, {
      mayMatch: (stored) => skipPrompt || mayMatch(stored),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    for await (const entry of entries) {
      if (options.signal?.aborted) break;
      if (skipPrompt && !entry.isBot) {
        skipPrompt = false;
        skipped = entry.messageId;
        continue;
      }
      const time = Date.parse(entry.date);
      if (Number.isNaN(time)) continue;
      if (time < cutoff()) break;
      if (matchQuery(query, entry.text) === -1) continue;
      hits.push(hitOf(entry, time, thread.threadId));
      if (++found >= limit) break;
    }
    hits = newestFirst(hits).slice(0, limit);
    if (options.signal?.aborted) break;
  }
  return { hits, ...(skipped ? { skipped } : {}) };
}

function hitOf(entry: LogEntry, time: number, threadId: string): SearchHit {
  return {
    time,
    author: entry.userName || entry.userId || (entry.isBot ? "guppy" : "someone"),
    text: entry.text,
    threadId,
    ...(entry.messageId ? { messageId: entry.messageId } : {}),
    source: "log",
  };
}

/** Hits sorted newest first (a stable sort: equal times keep their order). */
export function newestFirst(hits: SearchHit[]): SearchHit[] {
  return [...hits].sort((a, b) => b.time - a.time);
}
