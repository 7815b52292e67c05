import { seg } from "./client.js";

// GET /v1/threads/{id}/events (docs/channels.md "HTTP API"): a thread's events as Server-Sent
// Events, followed with EventSource (same origin: the session cookie goes along).

/** One event of the stream: its SSE name and its JSON data. */
export type ThreadEvent =
  | { type: "ready"; thread_id: string }
  | { type: "start"; message_id: string; text: string }
  | { type: "text_delta"; message_id: string; delta: string }
  | { type: "tool_call"; message_id: string; id: string; name: string; args: unknown }
  | { type: "tool_output"; message_id: string; id: string; name: string; text: string }
  | {
      type: "tool_result";
      message_id: string;
      id: string;
      name: string;
      is_error: boolean;
      text: string;
    }
  | { type: "error"; message_id: string; kind: string; message: string }
  | {
      type: "final";
      message_id: string;
      text: string;
      stop_reason: string;
      error: string | null;
      delivered?: boolean;
    }
  | { type: "notice"; text: string }
  | { type: "message"; text: string; from?: string }
  | { type: "queued"; message_id: string; position: number }
  | { type: "busy"; queued: number }
  | { type: "overflow"; thread_id: string; message: string };

export const THREAD_EVENT_TYPES = [
  "ready",
  "start",
  "text_delta",
  "tool_call",
  "tool_output",
  "tool_result",
  "error",
  "final",
  "notice",
  "message",
  "queued",
  "busy",
  "overflow",
] as const satisfies ReadonlyArray<ThreadEvent["type"]>;

export interface ThreadEventHandlers {
  onEvent(event: ThreadEvent): void;
  /**
   * Events may have been missed (the stream came back after a break, or the gateway dropped it
   * for falling behind): what was shown should be read again from the messages.
   */
  onGap(): void;
  /** Whether the stream is open (false while it is broken and being retried). */
  onConnected?(connected: boolean): void;
}

/** How long to wait before opening again a stream the gateway closed (EventSource gave up). */
const REOPEN_MS = 3000;

/**
 * Follows thread `threadId`'s events until the returned function is called. EventSource
 * reconnects by itself after a network break; a stream it gave up on (an HTTP error such as a
 * restarted gateway's 503) or an `overflow` is opened again here. Each reopening is a gap.
 */
export function followThreadEvents(threadId: string, handlers: ThreadEventHandlers): () => void {
  const url = `/v1/threads/${seg(threadId)}/events`;
  let source: EventSource | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;
  let opened = false;

  const reopen = () => {
    source?.close();
    source = undefined;
    handlers.onConnected?.(false);
    if (!closed) timer = setTimeout(open, REOPEN_MS);
  };
  const open = () => {
    timer = undefined;
    const es = new EventSource(url, { withCredentials: true });
    source = es;
    for (const type of THREAD_EVENT_TYPES) {
      es.addEventListener(type, (message: MessageEvent<string>) => {
        let data: unknown;
        try {
          data = JSON.parse(message.data);
        } catch {
          return;
        }
        const event = { ...(data as object), type } as ThreadEvent;
        if (type === "ready") {
          handlers.onConnected?.(true);
          // Every `ready` after the first follows a break: events of it may be lost.
          if (opened) handlers.onGap();
          opened = true;
        }
        handlers.onEvent(event);
        if (type === "overflow") {
          handlers.onGap();
          reopen();
        }
      });
    }
    es.onerror = () => {
      if (es.readyState === EventSource.CLOSED) reopen();
      else handlers.onConnected?.(false);
    };
  };
  open();
  return () => {
    closed = true;
    if (timer) clearTimeout(timer);
    source?.close();
  };
}
