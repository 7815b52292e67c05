import type { OrchestratorEvent } from "@guppy/core";
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import { createAsyncQueue } from "./async-queue.js";
import type { HttpBackend } from "./http-backend.js";

// GET /v1/threads/{id}/events: a thread's orchestrator events as Server-Sent Events, with a
// bounded buffer per subscriber.

/** Bytes of events an `/events` subscriber may fall behind by before it is dropped. */
export const SUBSCRIBER_BUFFER_BYTES = 1024 * 1024;
/** How long a dropped subscriber has to take its `overflow` event before its connection closes. */
const OVERFLOW_GRACE_MS = 5_000;

interface SseEvent {
  event: string;
  data: string;
}

/** The SSE form of an event: text deltas, tool calls/results, final, errors, notices. */
function toSse(event: OrchestratorEvent): { event: string; data: string } | undefined {
  const data = (value: Record<string, unknown>) => JSON.stringify(value);
  switch (event.type) {
    case "runner": {
      const e = event.event;
      const base = { message_id: event.inboxId };
      switch (e.type) {
        case "run_start":
          return { event: "start", data: data({ ...base, text: e.text }) };
        case "text_delta":
          return { event: "text_delta", data: data({ ...base, delta: e.delta }) };
        case "tool_call":
          return {
            event: "tool_call",
            data: data({ ...base, id: e.toolCallId, name: e.name, args: e.args }),
          };
        case "tool_result":
          return {
            event: "tool_result",
            data: data({
              ...base,
              id: e.toolCallId,
              name: e.name,
              is_error: e.isError,
              text: e.text,
            }),
          };
        case "tool_output":
          // A running tool's last output lines (the runner sends at most 4 a second, redacted).
          return {
            event: "tool_output",
            data: data({ ...base, id: e.toolCallId, name: e.name, text: e.text }),
          };
        case "error":
          return { event: "error", data: data({ ...base, kind: e.kind, message: e.message }) };
        case "run_end":
          // A heartbeat with nothing for the user: subscribers see nothing of it.
          if (e.quiet) return undefined;
          return {
            event: "final",
            data: data({
              ...base,
              text: e.text,
              stop_reason: e.stopReason,
              error: e.errorMessage ?? null,
              // Posted already by the run's send_message: a client shows it once.
              ...(e.delivered ? { delivered: true } : {}),
            }),
          };
        default:
          return undefined;
      }
    }
    case "notice":
      return event.text ? { event: "notice", data: data({ text: event.text }) } : undefined;
    case "message":
      return {
        event: "message",
        data: data({ text: event.text, ...(event.from ? { from: event.from } : {}) }),
      };
    case "queued":
      return {
        event: "queued",
        data: data({ message_id: event.inboxId, position: event.position }),
      };
    case "busy":
      return { event: "busy", data: data({ queued: event.queued }) };
    default:
      return undefined;
  }
}

/**
 * Streams thread `id`'s events to the client of `c` until it goes or the gateway closes the
 * stream (`onStream`). What waits to be written is bounded: a subscriber that stops reading must
 * not make the gateway keep every event for it. Past the bound it is sent a last `overflow` event
 * and dropped — and if it does not take even that, its connection is closed.
 */
export function streamThreadEvents(
  c: Context,
  id: string,
  subscribe: NonNullable<HttpBackend["subscribe"]>,
  onStream?: (close: () => void) => () => void,
): Response {
  return streamSSE(c, async (stream) => {
    const queue = createAsyncQueue<{ sse?: SseEvent; bytes: number }>();
    let pending = 0;
    let overflowed = false;
    const overflow = () => {
      overflowed = true;
      unsubscribe();
      queue.drop();
      queue.push({
        sse: {
          event: "overflow",
          data: JSON.stringify({
            thread_id: id,
            message: `This stream fell more than ${SUBSCRIBER_BUFFER_BYTES} bytes behind and was closed; read faster, or reconnect and read the thread's messages.`,
          }),
        },
        bytes: 0,
      });
      queue.close();
      setTimeout(() => {
        stream.abort();
        (
          c.env as { incoming?: { socket?: { destroy(): void } } } | undefined
        )?.incoming?.socket?.destroy();
      }, OVERFLOW_GRACE_MS).unref();
    };
    const unsubscribe = subscribe(id, (event) => {
      if (overflowed) return;
      const sse = toSse(event);
      if (!sse) return;
      const bytes = sse.event.length + sse.data.length + 16;
      pending += bytes;
      if (pending > SUBSCRIBER_BUFFER_BYTES) overflow();
      else queue.push({ sse, bytes });
    });
    const unregister = onStream?.(() => queue.close());
    const keepAlive = setInterval(() => {
      if (overflowed) return;
      pending += 16;
      queue.push({ bytes: 16 });
    }, 15_000);
    stream.onAbort(() => queue.close());
    try {
      await stream.writeSSE({ event: "ready", data: JSON.stringify({ thread_id: id }) });
      for await (const item of queue) {
        if (stream.aborted) break;
        if (item.sse) await stream.writeSSE(item.sse);
        else await stream.write(": keep-alive\n\n");
        pending -= item.bytes;
      }
    } finally {
      clearInterval(keepAlive);
      unsubscribe();
      unregister?.();
    }
  });
}
