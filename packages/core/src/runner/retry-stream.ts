import { randomUUID } from "node:crypto";
import type { StreamFn } from "@mariozechner/pi-agent-core";
import {
  type AssistantMessage,
  type AssistantMessageEvent,
  type AssistantMessageEventStream,
  createAssistantMessageEventStream,
} from "@mariozechner/pi-ai";
import { retryAfterMs, sleep } from "../time/wait.js";
import { zeroUsage } from "./message-text.js";
import { REQUEST_ID_HEADER, takeResponse, watchResponse } from "./provider-responses.js";
import {
  CUT_STREAM_MESSAGE,
  isCutError,
  type StreamEndWatch,
  watchStreamEnd,
} from "./stream-end.js";

type StreamRequest = NonNullable<Parameters<StreamFn>[2]>;

export interface RetryPolicy {
  /** Retries after the first attempt (GUPPY_MAX_RETRIES). */
  maxRetries: number;
  /** A longer `retry-after` fails the request at once (GUPPY_MAX_RETRY_WAIT_SECONDS). */
  maxRetryWaitSeconds: number;
  /** Characters of text, thinking and tool-call arguments past which the answer is cut (GUPPY_MAX_ANSWER_CHARS; 0: no limit). */
  maxAnswerChars: number;
  /** First backoff step in ms (0.5 s; tests shorten it). */
  baseDelayMs?: number;
  /** Told before each wait (the gateway log says why a run is quiet). */
  onRetry?: (retry: RetryNotice) => void;
}

export interface RetryNotice {
  /** 1 for the first retry. */
  attempt: number;
  status?: number;
  waitMs: number;
  error: string;
}

const MAX_BACKOFF_MS = 8_000;
const RETRYABLE_STATUS = new Set([408, 409, 429]);

/**
 * Sends a model request and retries it here rather than in the provider SDK, whose retry sleeps
 * for whatever `retry-after` says (an hour for 3600) on a timer the abort signal does not reach.
 * A request is retried when it failed with 408, 409, 429 or 5xx, or at the connection, before any
 * of its answer was delivered (`start` and opened blocks are held back until the first delta);
 * the wait is what the provider asked for (`retry-after-ms`, `retry-after`) or a jittered
 * backoff of 0.5 s·2^n up to 8 s, and ends at once on abort (the answer then ends as aborted).
 * A provider asking for more than `maxRetryWaitSeconds` fails the request at once, saying so.
 *
 * A stream that ends without a finish reason (stream-end.ts) is a cut answer, never a whole one:
 * retried like a dropped connection when nothing of it was delivered, else kept as an answer
 * that ended in error, saying it was cut off.
 *
 * The answer is also bounded: past `maxAnswerChars` its request is stopped and what came is kept
 * as an answer that ended in error, saying it was cut and why (a provider that ignores
 * max_tokens would otherwise stream into memory and the logs without end).
 */
export function retryingStream(
  send: (request: StreamRequest) => ReturnType<StreamFn>,
  request: StreamRequest,
  policy: RetryPolicy,
): AssistantMessageEventStream {
  const out = createAssistantMessageEventStream();
  const signal = request.signal;
  const finish = (event: AssistantMessageEvent) => {
    out.push(event);
    out.end();
  };
  const run = async () => {
    for (let attempt = 0; ; attempt++) {
      const id = randomUUID();
      watchResponse(id);
      // Its own abort: the answer cap stops this request without aborting the caller's run.
      const own = new AbortController();
      const relay = () => own.abort();
      if (signal?.aborted) own.abort();
      else signal?.addEventListener("abort", relay, { once: true });
      let failed: Failure | undefined;
      let seen: ReturnType<typeof takeResponse>;
      try {
        const answer = send({
          ...request,
          signal: own.signal,
          maxRetries: 0,
          headers: { ...request.headers, [REQUEST_ID_HEADER]: id },
        });
        // Watched before the provider's first push: a stream function returns its stream first.
        const inner = answer instanceof Promise ? await answer : answer;
        failed = await pump(inner, out, own, policy.maxAnswerChars, watchStreamEnd(inner));
      } finally {
        signal?.removeEventListener("abort", relay);
        seen = takeResponse(id);
      }
      if (!failed) return;
      const failure = failed.message;
      if (signal?.aborted || failure.stopReason === "aborted") return finish(aborted(failure));
      const status = seen?.status ?? statusIn(failure.errorMessage);
      const retryable =
        failed.cut ||
        (status !== undefined && status !== 200
          ? RETRYABLE_STATUS.has(status) || status >= 500
          : seen?.connectionFailed === true);
      if (!retryable || attempt >= policy.maxRetries) return finish(errorEvent(failure));
      const asked = retryAfterMs(seen?.headers ?? {});
      if (asked !== undefined && asked > policy.maxRetryWaitSeconds * 1000) {
        const message = `${failure.errorMessage ?? `HTTP ${status}`}: the provider asked to wait ${Math.ceil(asked / 1000)} s before retrying, more than GUPPY_MAX_RETRY_WAIT_SECONDS (${policy.maxRetryWaitSeconds})`;
        return finish(errorEvent({ ...failure, errorMessage: message }));
      }
      const wait =
        asked ??
        Math.min(backoff(attempt, policy.baseDelayMs ?? 500), policy.maxRetryWaitSeconds * 1000);
      policy.onRetry?.({
        attempt: attempt + 1,
        ...(status !== undefined ? { status } : {}),
        waitMs: Math.round(wait),
        error: failure.errorMessage ?? "",
      });
      if (!(await sleep(wait, signal))) return finish(aborted(failure));
    }
  };
  run().catch((error: unknown) => {
    // A stream function that threw: the answer is an error, as pi-ai's providers end theirs.
    finish({
      type: "error",
      reason: signal?.aborted ? "aborted" : "error",
      error: {
        role: "assistant",
        content: [],
        api: "unknown",
        provider: "unknown",
        model: "unknown",
        usage: zeroUsage(),
        stopReason: signal?.aborted ? "aborted" : "error",
        errorMessage: error instanceof Error ? error.message : String(error),
        timestamp: Date.now(),
      },
    });
  });
  return out;
}

/** An attempt that failed before anything of its answer was delivered. */
interface Failure {
  message: AssistantMessage;
  /** Its stream ended without a finish reason: retried like a dropped connection. */
  cut: boolean;
}

/**
 * Passes one attempt's events on. Returns the attempt's failure when it failed before anything
 * of its answer was delivered (no delta, no block ended; the caller decides whether to retry);
 * otherwise ends `out`.
 */
async function pump(
  inner: AssistantMessageEventStream,
  out: AssistantMessageEventStream,
  own: AbortController,
  maxChars: number,
  end: StreamEndWatch,
): Promise<Failure | undefined> {
  // Held back until the answer has something in it: a block opened and then cut is no answer.
  const held: AssistantMessageEvent[] = [];
  let delivered = false;
  let chars = 0;
  for await (const event of inner) {
    const cut =
      (event.type === "done" && end.finished() === false) ||
      (event.type === "error" && isCutError(event.error));
    if (!delivered) {
      if (
        event.type === "start" ||
        event.type === "text_start" ||
        event.type === "thinking_start" ||
        event.type === "toolcall_start"
      ) {
        held.push(event);
        continue;
      }
      if (cut) return { message: cutMessage(terminal(event), CUT_STREAM_MESSAGE), cut };
      if (event.type === "error") return { message: event.error, cut };
      delivered = true;
      for (const early of held) out.push(early);
    }
    if (cut) {
      out.push({
        type: "error",
        reason: "error",
        error: cutMessage(terminal(event), CUT_STREAM_MESSAGE),
      });
      break;
    }
    if (maxChars > 0 && "delta" in event && typeof event.delta === "string") {
      chars += event.delta.length;
      if (chars > maxChars) {
        own.abort();
        const message = `The answer was cut after ${maxChars.toLocaleString("en-US")} characters (GUPPY_MAX_ANSWER_CHARS): the model went on past the limit.`;
        out.push({ type: "error", reason: "error", error: cutMessage(event.partial, message) });
        out.end();
        return undefined;
      }
    }
    out.push(event);
    if (event.type === "done" || event.type === "error") break;
  }
  out.end();
  return undefined;
}

/** The answer a terminal event ends with. */
function terminal(event: AssistantMessageEvent): AssistantMessage {
  if (event.type === "done") return event.message;
  if (event.type === "error") return event.error;
  return event.partial;
}

/** What the answer had when it was cut, as an answer that ended in error saying why. */
function cutMessage(partial: AssistantMessage, errorMessage: string): AssistantMessage {
  // The provider goes on mutating `partial` as its abort lands: keep a copy without its scratch.
  const content = partial.content.map((block) => {
    const {
      index: _index,
      partialArgs: _args,
      ...rest
    } = block as typeof block & {
      index?: unknown;
      partialArgs?: unknown;
    };
    return structuredClone(rest) as typeof block;
  });
  return {
    ...partial,
    content,
    stopReason: "error",
    errorMessage,
  };
}

function errorEvent(message: AssistantMessage): AssistantMessageEvent {
  return { type: "error", reason: "error", error: { ...message, stopReason: "error" } };
}

function aborted(message: AssistantMessage): AssistantMessageEvent {
  return {
    type: "error",
    reason: "aborted",
    error: { ...message, stopReason: "aborted", errorMessage: "Request was aborted" },
  };
}

/** The HTTP status a provider SDK's error message starts with ("429 Rate limited"). */
function statusIn(message: string | undefined): number | undefined {
  const m = message?.match(/^(\d{3})\b/);
  return m ? Number(m[1]) : undefined;
}

function backoff(attempt: number, baseMs: number): number {
  const step = Math.min(MAX_BACKOFF_MS, baseMs * 2 ** attempt);
  return step * (0.75 + Math.random() * 0.25);
}
