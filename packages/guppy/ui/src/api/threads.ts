import type { ThreadEventJson } from "../../../src/channels/http/api-types.js";
import { get, post, prefetch, query, seg } from "./client.js";

// The thread routes (docs/channels.md "HTTP API"): list, status, messages, send, steer, abort,
// /new, /compact.

export type ThreadState = "inactive" | "idle" | "waiting" | "running";

/** A thread as GET /v1/threads lists it. */
export interface ThreadJson {
  id: string;
  /** The first words of its first user message; null until it has one. */
  title: string | null;
  state: ThreadState;
  queued: number;
  last_activity: string | null;
  model: string;
  messages: number;
  tokens: { context: number; context_window: number };
  cost: number;
  subagents?: Array<{
    id: string;
    label?: string;
    state: "running" | "done" | "failed" | "aborted";
  }>;
  events?: ThreadEventJson[];
}

/** GET /v1/threads/{id}/status: the thread as listed, and more (only what the page shows here). */
export interface ThreadStatusJson extends ThreadJson {
  compactions: number;
  usage?: { thread: { cost: number; requests: number } };
}

export interface ThreadPageJson {
  threads: ThreadJson[];
  next: string | null;
}

/** A message of a thread's log (GET /v1/threads/{id}/messages). */
export interface MessageJson {
  id: string;
  date: string;
  from: string;
  is_bot: boolean;
  text: string;
}

export interface MessagePageJson {
  thread_id: string;
  messages: MessageJson[];
  next_before: string | null;
}

/** Threads a page of GET /v1/threads as the chat page asks for them. */
export const THREAD_PAGE = 5000;
/** Messages a page: the newest on opening a thread, then older ones as the reader scrolls up. */
export const MESSAGE_PAGE = 50;

/**
 * The chat page's first calls, started while its code loads (main.ts): the thread list and, for
 * an open thread, its newest messages and status.
 */
export function prefetchChat(threadId: string | undefined): void {
  prefetch(`/v1/threads${query({ limit: THREAD_PAGE })}`);
  if (threadId === undefined) return;
  prefetch(`/v1/threads/${seg(threadId)}/messages${query({ limit: MESSAGE_PAGE })}`);
  prefetch(`/v1/threads/${seg(threadId)}/status`);
}

export const listThreads = (page: { limit?: number; after?: string } = {}) =>
  get<ThreadPageJson>(`/v1/threads${query(page)}`);

/**
 * Every thread, following `next` page by page (`limit` threads a page: one request for most
 * homes — each page is a round trip, and the list is shown once whole, sorted by activity).
 */
export async function listAllThreads(limit = THREAD_PAGE): Promise<ThreadJson[]> {
  const threads: ThreadJson[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await listThreads({ limit, ...(after !== undefined ? { after } : {}) });
    threads.push(...page.threads);
    if (page.next === null || page.threads.length === 0) return threads;
    after = page.next;
  }
}

export const threadStatus = (id: string) => get<ThreadStatusJson>(`/v1/threads/${seg(id)}/status`);

/** The newest `limit` messages, or those before `before` (a message id). */
export const threadMessages = (id: string, page: { limit: number; before?: string }) =>
  get<MessagePageJson>(`/v1/threads/${seg(id)}/messages${query(page)}`);

export interface SentJson {
  id: string;
  log_id: string;
  thread_id: string;
  status: "queued";
  position: number;
}

export const sendMessage = (id: string, text: string, messageId?: string) =>
  post<SentJson>(`/v1/threads/${seg(id)}/messages`, {
    text,
    user: "owner",
    ...(messageId ? { message_id: messageId } : {}),
  });
export const steerRun = (id: string, text: string) =>
  post<{ status: "delivered" }>(`/v1/threads/${seg(id)}/steer`, { text });
export const abortRun = (id: string) =>
  post<{ status: "delivered" }>(`/v1/threads/${seg(id)}/abort`);
export const newConversation = (id: string) =>
  post<{ status: "reset"; archived: string | null }>(`/v1/threads/${seg(id)}/new`);
export const compactThread = (id: string) =>
  post<{ status: "compacted"; report: string }>(`/v1/threads/${seg(id)}/compact`);
