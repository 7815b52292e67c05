import type { HttpBackend, ThreadSummary } from "./http-backend.js";

/**
 * How many threads' statuses the agents' thread works out per call: a thread with no agent
 * loaded has its status.json read the first time (~0.05–0.2 ms), so a call stays within a few
 * milliseconds and runs go on between calls.
 */
export const STATUSES_PER_CALL = 128;

/**
 * A part of the listing: the threads after `after` (a valid thread id, any spelling), `limit` of
 * them.
 */
export interface ThreadPageRequest {
  after?: string;
  limit?: number;
}

export interface ThreadPage {
  threads: ThreadSummary[];
  /** The id to pass as `after` for the next part; null when there is none. */
  next: string | null;
}

/**
 * GET /v1/threads: every thread in memory or with a directory, once each, sorted by id, or a
 * page of them. The directories are listed where this runs (the HTTP worker), the threads in
 * memory come from the orchestrator, and the statuses of the page's other threads follow from
 * it a few at a time — a listing of 20,000 threads used to hold the agents' thread for seconds.
 */
export async function listThreads(
  backend: Pick<HttpBackend, "threadsInMemory" | "threadIdsOnDisk" | "statuses">,
  page: ThreadPageRequest = {},
): Promise<ThreadPage> {
  const [inMemory, onDisk] = await Promise.all([
    backend.threadsInMemory(page.after),
    backend.threadIdsOnDisk(),
  ]);
  // By canonical id (a directory's id is one already); a thread in memory comes with its status.
  const known = new Map<string, ThreadSummary | undefined>();
  for (const id of onDisk) known.set(id, undefined);
  for (const { id, status } of inMemory.threads) known.set(id, status);
  let ids = [...known.keys()].sort();
  const { after } = inMemory;
  if (after !== undefined) ids = ids.filter((id) => id > after);
  const more = page.limit !== undefined && ids.length > page.limit;
  if (page.limit !== undefined) ids = ids.slice(0, page.limit);

  const missing = ids.filter((id) => known.get(id) === undefined);
  for (let i = 0; i < missing.length; i += STATUSES_PER_CALL) {
    const statuses = await backend.statuses(missing.slice(i, i + STATUSES_PER_CALL));
    statuses.forEach((status, j) => {
      known.set(missing[i + j] as string, status);
    });
  }
  const threads = ids.map((id) => known.get(id) as ThreadSummary);
  return { threads, next: more ? (threads.at(-1)?.threadId ?? null) : null };
}
