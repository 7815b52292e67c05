import type { Dirent } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import {
  CONTEXT_FILE,
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
import { readLinesBackward, readLinesForward, sizeOf } from "./read-lines.js";
import type {
  BackwardLogPage,
  ContextRecord,
  ForwardLogPage,
  LogCursor,
  ThreadLogReader,
} from "./types.js";

// The file backend's reader of threads' logs and contexts: `<thread dir>/log.jsonl` and
// `context.jsonl` as the store writes them (thread-layout.ts), read from any process. A cursor
// holds a byte offset at a line's start ("f:<offset>"), which no caller reads.

const cursorOf = (offset: number) => `f:${offset}` as LogCursor;

function offsetOf(cursor: LogCursor): number {
  const m = /^f:(0|[1-9][0-9]{0,15})$/.exec(cursor);
  if (!m?.[1])
    throw new TypeError(`not a cursor of a thread's log file: ${JSON.stringify(cursor)}`);
  return Number(m[1]);
}

function checkLimit(limit: number): void {
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new RangeError(`a page's limit must be a whole number from 1, not ${limit}`);
  }
}

/** The entry on a line, or undefined for a torn or foreign line. */
function entryOf(line: string): LogEntry | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return isLogEntry(value) ? value : undefined;
  } catch {
    return undefined; // A line cut short by a crash mid-write.
  }
}

/** The JSON values of a JSON-lines text's lines; a torn line is left out. */
function parseLines(text: string): unknown[] {
  const out: unknown[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    try {
      out.push(JSON.parse(line));
    } catch {
      // A line cut short by a crash mid-write.
    }
  }
  return out;
}

/** The text of the file at `path`; empty when there is none. */
async function textOf(path: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "";
    throw error;
  }
}

/** Reads threads' logs and contexts under GUPPY_HOME `home`. */
export function createFileThreadLog(home: string): ThreadLogReader {
  const logOf = (threadId: string) => join(threadDirOf(home, threadId), LOG_FILE);

  return {
    async readAll(threadId) {
      return parseLines(await textOf(logOf(threadId))).filter(isLogEntry);
    },

    async readForward(threadId, page): Promise<ForwardLogPage> {
      checkLimit(page.limit);
      const path = logOf(threadId);
      let next = page.after === undefined ? 0 : offsetOf(page.after);
      const entries: LogEntry[] = [];
      for await (const line of readLinesForward(path, next)) {
        const entry = entryOf(line.text);
        next = line.end;
        if (entry === undefined) continue;
        entries.push(entry);
        if (entries.length === page.limit) break;
      }
      // At the end when nothing whole is left after `next` (a torn last line is not whole).
      let atEnd = true;
      if (entries.length === page.limit) {
        for await (const line of readLinesForward(path, next)) {
          if (entryOf(line.text) !== undefined) {
            atEnd = false;
            break;
          }
          next = line.end;
        }
      }
      return { entries, next: cursorOf(next), atEnd };
    },

    async readBackward(threadId, page): Promise<BackwardLogPage> {
      checkLimit(page.limit);
      const before = page.before;
      const newestFirst: LogEntry[] = [];
      let started = before === undefined || "cursor" in before;
      let oldestStart = 0;
      for await (const line of readLinesBackward(logOf(threadId), {
        ...(before && "cursor" in before ? { before: offsetOf(before.cursor) } : {}),
      })) {
        const entry = entryOf(line.text);
        if (entry === undefined) continue;
        if (!started) {
          started =
            before !== undefined && "messageId" in before && entry.messageId === before.messageId;
          continue;
        }
        if (newestFirst.length === page.limit) {
          // One more entry is older than the page: the caller can ask for it.
          return { status: "found", entries: newestFirst.reverse(), older: cursorOf(oldestStart) };
        }
        newestFirst.push(entry);
        oldestStart = line.start;
      }
      if (!started) return { status: "unknown_before" };
      return { status: "found", entries: newestFirst.reverse(), older: null };
    },

    async *newestFirst(threadId, options = {}) {
      for await (const line of readLinesBackward(logOf(threadId))) {
        if (options.signal?.aborted) return;
        if (options.mayMatch && !options.mayMatch(line.text)) continue;
        const entry = entryOf(line.text);
        if (entry !== undefined) yield entry;
      }
    },

    async lastWritten(threadId) {
      try {
        return (await stat(logOf(threadId))).mtimeMs;
      } catch {
        return undefined;
      }
    },

    async channelThreads(threadId) {
      const ref = parseThreadId(threadId);
      const channelDir = channelDirOf(home, threadId);
      const channelName = basename(channelDir);
      const ids = await Promise.all(
        (await subdirs(channelDir)).filter(isThreadPartName).map(async (dir) => {
          const idFile = needsThreadIdFile(channelName, dir)
            ? await readFile(join(channelDir, dir, THREAD_ID_FILE), "utf8").catch(() => undefined)
            : undefined;
          const id = threadIdOfDir(ref.adapter, channelName, dir, idFile);
          // A shortened channel name is shared by a hash: the thread must be of this very channel.
          if (id === undefined || parseThreadId(id).channel !== ref.channel) return undefined;
          return (await sizeOf(join(channelDir, dir, LOG_FILE))) === undefined ? undefined : id;
        }),
      );
      return ids.filter((id): id is string => id !== undefined);
    },

    async readContext(threadId) {
      const path = join(threadDirOf(home, threadId), CONTEXT_FILE);
      return parseLines(await textOf(path)).filter(
        (value): value is ContextRecord => value !== null && typeof value === "object",
      );
    },
  };
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
