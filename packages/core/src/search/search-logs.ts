import type { Dirent } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import { readLinesBackward } from "../state/read-lines.js";
import {
  channelDirOf,
  isLogEntry,
  isThreadPartName,
  LOG_FILE,
  type LogEntry,
  needsThreadIdFile,
  parseThreadId,
  THREAD_ID_FILE,
  threadDirOf,
  threadIdOfDir,
} from "../store/thread-layout.js";
import { matchQuery, rawLineFilter, type SearchQuery } from "./search-query.js";
import type { SearchHit, SearchScope } from "./types.js";

// guppy's own record of what was said: each thread's log.jsonl (people's messages and guppy's
// answers, no tool output). Read newest first, file by file, newest file first, until the search
// has its `limit` of matches and no older file can hold a newer one.

/** A thread's log file and when it was last written. */
interface ThreadLog {
  threadId: string;
  path: string;
  /** Epoch ms of its last write: no line in it is newer (give or take the clock). */
  modified: number;
}

/**
 * The log files a search of `threadId` reads: its own, or for scope `channel` those of every
 * thread in its channel's folder (`<home>/<adapter>/<channel>/*`). A subagent's thread is part of
 * its parent's conversation, not a thread of the channel: it searches its parent's.
 */
export async function threadLogs(
  home: string,
  threadId: string,
  scope: SearchScope,
): Promise<ThreadLog[]> {
  if (scope === "thread") {
    const path = join(threadDirOf(home, threadId), LOG_FILE);
    const modified = await mtimeOf(path);
    return modified === undefined ? [] : [{ threadId, path, modified }];
  }
  const ref = parseThreadId(threadId);
  const channelDir = channelDirOf(home, threadId);
  const channelName = basename(channelDir);
  const logs = await Promise.all(
    (await subdirs(channelDir)).filter(isThreadPartName).map(async (dir) => {
      const idFile = needsThreadIdFile(channelName, dir)
        ? await readFile(join(channelDir, dir, THREAD_ID_FILE), "utf8").catch(() => undefined)
        : undefined;
      const id = threadIdOfDir(ref.adapter, channelName, dir, idFile);
      // A shortened channel name is shared by a hash: the thread must be of this very channel.
      if (id === undefined || parseThreadId(id).channel !== ref.channel) return undefined;
      const path = join(channelDir, dir, LOG_FILE);
      const modified = await mtimeOf(path);
      return modified === undefined ? undefined : { threadId: id, path, modified };
    }),
  );
  return logs
    .filter((log): log is ThreadLog => log !== undefined)
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
  for (const log of logs) {
    // Sorted newest file first: once a file is older than the `limit`th hit, so are the rest.
    if (log.modified + SLACK_MS < cutoff()) break;
    let skipPrompt = log.threadId === options.current;
    let found = 0;
    for await (const { text: line } of readLinesBackward(log.path)) {
      if (options.signal?.aborted) break;
      // Most lines do not match: those are not parsed, but for the prompt still to be found.
      if (!skipPrompt && !mayMatch(line)) continue;
      const entry = parseEntry(line);
      if (!entry) continue;
      if (skipPrompt && !entry.isBot) {
        skipPrompt = false;
        skipped = entry.messageId;
        continue;
      }
      const time = Date.parse(entry.date);
      if (Number.isNaN(time)) continue;
      if (time < cutoff()) break;
      if (matchQuery(query, entry.text) === -1) continue;
      hits.push(hitOf(entry, time, log.threadId));
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

function parseEntry(line: string): LogEntry | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return isLogEntry(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

async function mtimeOf(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).mtimeMs;
  } catch {
    return undefined;
  }
}

/** The directories in `dir`; none when it cannot be read. */
async function subdirs(dir: string): Promise<string[]> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name);
}
