import { open } from "node:fs/promises";
import { isLogEntry } from "@guppy/core/thread-layout";

/** How much of a log's start is read for its title: a first user message is near the top. */
export const TITLE_SCAN_BYTES = 64 * 1024;
/** A title's most words and characters (the thread list shows one line of it). */
export const TITLE_WORDS = 10;
export const TITLE_CHARS = 80;
/** How many logs are opened at once while titles are worked out (a first listing of thousands). */
const OPEN_AT_ONCE = 16;

/**
 * GET /v1/threads's `title` of each thread: the first words of the first user message of its
 * log.jsonl, read in the HTTP worker from the log's start and kept per thread — a log only grows
 * (`/new` moves the context aside, not the log), so a title once found never changes. A log with
 * no user message yet is read again only once it has grown, and never past its first
 * TITLE_SCAN_BYTES: the thread list polled every two seconds costs a map lookup per thread.
 */
export function createThreadTitles(logFileOf: (threadId: string) => string | Promise<string>) {
  const found = new Map<string, string>();
  /** Threads with no title yet: the log size at the last look. */
  const untitled = new Map<string, number>();

  async function titleOf(threadId: string): Promise<string | null> {
    const known = found.get(threadId);
    if (known !== undefined) return known;
    let scan: { title?: string; size: number };
    try {
      scan = await scanLog(await logFileOf(threadId), untitled.get(threadId));
    } catch {
      return null; // An unreadable log (or id) costs its thread a title, never the listing.
    }
    if (scan.title !== undefined) {
      found.set(threadId, scan.title);
      untitled.delete(threadId);
      return scan.title;
    }
    untitled.set(threadId, scan.size);
    return null;
  }

  return {
    /** The titles of `threadIds`, in their order; null for a thread with no user message yet. */
    async titles(threadIds: string[]): Promise<Array<string | null>> {
      const titles: Array<string | null> = [];
      for (let i = 0; i < threadIds.length; i += OPEN_AT_ONCE) {
        const batch = threadIds.slice(i, i + OPEN_AT_ONCE);
        titles.push(...(await Promise.all(batch.map(titleOf))));
      }
      return titles;
    },
  };
}

export type ThreadTitles = ReturnType<typeof createThreadTitles>;

/**
 * The title in the first TITLE_SCAN_BYTES of a log, and the log's size. Not read when its size is
 * still `lastSize` (nothing new) or when a previous look already covered the scanned part.
 */
async function scanLog(
  path: string,
  lastSize: number | undefined,
): Promise<{ title?: string; size: number }> {
  let file: Awaited<ReturnType<typeof open>>;
  try {
    file = await open(path, "r");
  } catch {
    return { size: 0 }; // No log yet: a thread known only in memory, or a fresh directory.
  }
  try {
    const { size } = await file.stat();
    if (lastSize !== undefined && (size === lastSize || lastSize >= TITLE_SCAN_BYTES)) {
      return { size };
    }
    const length = Math.min(size, TITLE_SCAN_BYTES);
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await file.read(buffer, 0, length, 0);
    const text = buffer.subarray(0, bytesRead).toString("utf8");
    const lines = text.split("\n");
    // The last piece may be a line cut by the scan's end (or one being written): left out.
    if (bytesRead === TITLE_SCAN_BYTES || !text.endsWith("\n")) lines.pop();
    for (const line of lines) {
      if (line.trim() === "") continue;
      let entry: unknown;
      try {
        entry = JSON.parse(line);
      } catch {
        continue;
      }
      if (!isLogEntry(entry) || entry.isBot) continue;
      const title = titleText(entry.text);
      if (title) return { title, size };
    }
    return { size };
  } finally {
    await file.close();
  }
}

/** The first TITLE_WORDS words of `text` on one line, cut at TITLE_CHARS with "…". */
export function titleText(text: string): string {
  const words = text.trim().split(/\s+/).filter(Boolean);
  let title = words.slice(0, TITLE_WORDS).join(" ");
  const cut = words.length > TITLE_WORDS || title.length > TITLE_CHARS;
  if (title.length > TITLE_CHARS) title = title.slice(0, TITLE_CHARS - 1).trimEnd();
  return cut ? `${title}…` : title;
}
