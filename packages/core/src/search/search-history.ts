import { createFileThreadLog } from "../state/file-thread-log.js";
import type { ThreadLogReader } from "../state/types.js";
import { canonicalThreadId } from "../store/thread-layout.js";
import { newestFirst, searchLogs, threadLogs } from "./search-logs.js";
import { matchQuery, type SearchQuery } from "./search-query.js";
import type { PlatformHistory, PlatformMessage, SearchHit, SearchScope } from "./types.js";

// One search over what guppy logged and what the chat platform keeps: the two lists of the newest
// matches, merged newest first, a message found in both shown once (its log line).

export interface SearchHistoryOptions {
  /** GUPPY_HOME: its threads' logs are read with the file backend unless `threadLog` is given. */
  home: string;
  /** The threads' logs (the state seam); default: the file backend's reader of `home`. */
  threadLog?: ThreadLogReader;
  /** The thread searched, or whose channel is searched. */
  threadId: string;
  scope: SearchScope;
  query: SearchQuery;
  limit: number;
  /** The platform's history of the thread and its channel, where the app can list it. */
  platformHistory?: PlatformHistory;
  /** At most this many platform messages are read (each page is a request to the platform). */
  platformScanLimit?: number;
  signal?: AbortSignal;
}

export interface SearchHistoryResult {
  /** The newest `limit` matches, newest first. */
  hits: SearchHit[];
  /** How many threads' logs were searched. */
  threads: number;
  /** Why the platform's history is missing from the hits or was cut short, when it is. */
  platformNote?: string;
}

/** Platform messages read at most per search: a few pages of requests to the platform. */
export const PLATFORM_SCAN_LIMIT = 1000;

/**
 * The newest `limit` messages of the thread or channel that match the query, from the log files
 * and the platform's history. A platform that fails (no history API, a network error) leaves
 * the log's hits and a note saying why.
 */
export async function searchHistory(options: SearchHistoryOptions): Promise<SearchHistoryResult> {
  const { query, limit, signal } = options;
  const log = options.threadLog ?? createFileThreadLog(options.home);
  const logs = await threadLogs(log, options.threadId, options.scope);
  const found = await searchLogs(log, logs, query, limit, { current: options.threadId, signal });
  const logHits = found.hits;
  if (!options.platformHistory) return { hits: logHits, threads: logs.length };
  const logged = new Set(logs.map((log) => log.threadId));
  const platform = await searchPlatform(
    options.platformHistory(options.scope, signal),
    query,
    limit,
    options.platformScanLimit ?? PLATFORM_SCAN_LIMIT,
    // guppy's own posts in a thread it logs are in that log already (not always with the
    // platform's message id: an answer's log line has its own).
    (message) => message.isMe && logged.has(message.threadId),
    signal,
  );
  // The prompt under way, left out of the log's hits, is left out of the platform's too.
  const seen = new Set(logHits.flatMap((hit) => (hit.messageId ? [hit.messageId] : [])));
  if (found.skipped) seen.add(found.skipped);
  const fresh = platform.hits.filter((hit) => !hit.messageId || !seen.has(hit.messageId));
  return {
    hits: newestFirst([...logHits, ...fresh]).slice(0, limit),
    threads: logs.length,
    ...(platform.note ? { platformNote: platform.note } : {}),
  };
}

async function searchPlatform(
  messages: AsyncIterable<PlatformMessage>,
  query: SearchQuery,
  limit: number,
  scanLimit: number,
  skip: (message: PlatformMessage) => boolean,
  signal?: AbortSignal,
): Promise<{ hits: SearchHit[]; note?: string }> {
  const hits: SearchHit[] = [];
  let scanned = 0;
  try {
    for await (const message of messages) {
      if (signal?.aborted) break;
      if (++scanned > scanLimit) {
        return {
          hits,
          note: `the platform's history was searched back to its ${scanLimit} newest messages`,
        };
      }
      const threadId = canonicalOrSame(message.threadId);
      if (skip({ ...message, threadId }) || matchQuery(query, message.text) === -1) continue;
      hits.push({
        time: message.date.getTime(),
        author: message.author,
        text: message.text,
        threadId,
        messageId: message.id,
        source: "platform",
      });
      if (hits.length >= limit) break;
    }
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { hits, note: `the platform's history could not be read (${oneLine(reason)})` };
  }
  return { hits };
}

/** `slack:D1:` as guppy spells it (`slack:D1:default`); an id guppy cannot parse as it is. */
function canonicalOrSame(threadId: string): string {
  try {
    return canonicalThreadId(threadId);
  } catch {
    return threadId;
  }
}

function oneLine(text: string): string {
  const line = text.split("\n")[0] ?? "";
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
