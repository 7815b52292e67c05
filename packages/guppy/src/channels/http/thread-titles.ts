import type { LogCursor, ThreadLogReader } from "@guppy/core/state";

/** How many entries of a log's start are read for its title: a first user message is near the top. */
export const TITLE_SCAN_ENTRIES = 64;
/** A title's most words and characters (the thread list shows one line of it). */
export const TITLE_WORDS = 10;
export const TITLE_CHARS = 80;
/** How many logs are read at once while titles are worked out (a first listing of thousands). */
const OPEN_AT_ONCE = 16;

/**
 * GET /v1/threads's `title` of each thread: the first words of the first user message of its
 * log, read in the HTTP worker from the log's start and kept per thread — a log only grows
 * (`/new` moves the context aside, not the log), so a title once found never changes. A log with
 * no user message yet is read on from where the last look stopped, and never past its first
 * TITLE_SCAN_ENTRIES entries: the thread list polled every two seconds costs a map lookup, or a
 * look at the log's end, per thread.
 */
export function createThreadTitles(log: Pick<ThreadLogReader, "readForward">) {
  const found = new Map<string, string>();
  /** Threads with no title yet: where the last look stopped, and the entries read so far. */
  const untitled = new Map<string, { next: LogCursor; read: number }>();

  async function titleOf(threadId: string): Promise<string | null> {
    const known = found.get(threadId);
    if (known !== undefined) return known;
    const last = untitled.get(threadId);
    if (last && last.read >= TITLE_SCAN_ENTRIES) return null;
    let page: Awaited<ReturnType<ThreadLogReader["readForward"]>>;
    try {
      page = await log.readForward(threadId, {
        limit: TITLE_SCAN_ENTRIES - (last?.read ?? 0),
        ...(last ? { after: last.next } : {}),
      });
    } catch {
      return null; // An unreadable log (or id) costs its thread a title, never the listing.
    }
    for (const entry of page.entries) {
      const title = entry.isBot ? "" : titleText(entry.text);
      if (title) {
        found.set(threadId, title);
        untitled.delete(threadId);
        return title;
      }
    }
    untitled.set(threadId, { next: page.next, read: (last?.read ?? 0) + page.entries.length });
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

/** The first TITLE_WORDS words of `text` on one line, cut at TITLE_CHARS with "…". */
export function titleText(text: string): string {
  const words = text.trim().split(/\s+/).filter(Boolean);
  let title = words.slice(0, TITLE_WORDS).join(" ");
  const cut = words.length > TITLE_WORDS || title.length > TITLE_CHARS;
  if (title.length > TITLE_CHARS) title = title.slice(0, TITLE_CHARS - 1).trimEnd();
  return cut ? `${title}…` : title;
}
