import type { StreamFn } from "@mariozechner/pi-agent-core";
import {
  type Api,
  type AssistantMessage,
  type AssistantMessageEventStream,
  type CacheRetention,
  createAssistantMessageEventStream,
  type Model,
  streamSimple,
} from "@mariozechner/pi-ai";
import { zeroUsage } from "./message-text.js";
import { type RetryNotice, retryingStream } from "./retry-stream.js";

/**
 * A model's key, or where to get it at each request: a key kept in a file that may change
 * (guppy.env), an OAuth token refreshed before it expires. A source that throws fails that
 * request with its message as the error (say what to run: `guppy login anthropic`).
 */
export type ApiKeySource = string | (() => string | undefined | Promise<string | undefined>);

export interface StreamFnOptions {
  apiKey?: ApiKeySource;
  maxTokens?: number;
  /**
   * Retries on 408/409/429/5xx and connection errors, made here (retry-stream.ts) with an
   * abortable wait; the provider SDKs get none of their own.
   */
  maxRetries: number;
  /** A `retry-after` longer than this fails the request at once (default 60). */
  maxRetryWaitSeconds?: number;
  /** An answer longer than this (text, thinking, tool-call arguments) is cut (0: no limit). */
  maxAnswerChars?: number;
  /** First backoff step in ms (tests). */
  retryBaseDelayMs?: number;
  /** Told before each retry's wait. */
  onRetry?: (retry: RetryNotice) => void;
  cacheRetention?: CacheRetention;
  /** Sampling temperature of every request (GUPPY_TEMPERATURE); absent: the provider's default. */
  temperature?: number;
  /** When it returns a message, that message is the answer and no request is made. */
  intercept?: (model: Model<Api>) => AssistantMessage | undefined;
  /** Called as each request starts. */
  onRequest?: () => void;
  /** Underlying stream function (tests pass pi-ai's faux provider through streamSimple too). */
  base?: StreamFn;
  /**
   * A request whose answer sends nothing for this long is stopped; 0 or absent: never. With
   * `onIdle`, the caller stops it (the runner aborts the run: no extra signal per request);
   * without, the request gets an abort of its own and its answer ends as an error saying why
   * (summary requests, which are rare).
   */
  idleTimeoutMs?: number;
  onIdle?: () => void;
}

/**
 * The stream function handed to pi-agent-core's loop: adds what the loop does not forward
 * (reply limit, retries with an abortable wait, the answer cap, API key, cache markers) and lets the runner answer without a request
 * (the tool-round limit).
 */
export function createStreamFn(options: StreamFnOptions): StreamFn {
  const base = options.base ?? streamSimple;
  return (model, context, streamOptions) => {
    const synthetic = options.intercept?.(model);
    if (synthetic) {
      const stream = createAssistantMessageEventStream();
      queueMicrotask(() => {
        stream.push({ type: "start", partial: synthetic });
        stream.push({ type: "done", reason: "stop", message: synthetic });
        stream.end(synthetic);
      });
      return stream;
    }
    options.onRequest?.();
    const key = options.apiKey;
    if (typeof key !== "function") return sendWith(key);
    let resolved: string | undefined | Promise<string | undefined>;
    try {
      resolved = key();
    } catch (error) {
      return keyErrorStream(model, error);
    }
    if (!(resolved instanceof Promise)) return sendWith(resolved);
    return resolved.then(sendWith, (error) => keyErrorStream(model, error));

    function sendWith(apiKey: string | undefined): ReturnType<StreamFn> {
      const request = {
        ...streamOptions,
        ...(apiKey ? { apiKey } : {}),
        ...(options.maxTokens ? { maxTokens: options.maxTokens } : {}),
        ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
        cacheRetention: options.cacheRetention ?? "short",
      };
      const policy = {
        maxRetries: options.maxRetries,
        maxRetryWaitSeconds: options.maxRetryWaitSeconds ?? 60,
        maxAnswerChars: options.maxAnswerChars ?? 0,
        baseDelayMs: options.retryBaseDelayMs,
        onRetry: options.onRetry,
      };
      const send = (req: typeof request) =>
        retryingStream((r) => base(model, context, r), req, policy);
      const { idleTimeoutMs, onIdle } = options;
      if (!idleTimeoutMs) return send(request);
      if (onIdle)
        return whenStream(send(request), (stream) =>
          watchStreamIdle(stream, idleTimeoutMs, onIdle),
        );
      return stopWhenQuiet(
        (signal) => send({ ...request, signal }),
        streamOptions?.signal,
        idleTimeoutMs,
      );
    }
  };
}

/** The answer of a request whose key could not be had: an error naming why, no request made. */
function keyErrorStream(model: Model<Api>, error: unknown): AssistantMessageEventStream {
  const message: AssistantMessage = {
    ...syntheticAssistantMessage(model, ""),
    content: [],
    stopReason: "error",
    errorMessage: error instanceof Error ? error.message : String(error),
  };
  const stream = createAssistantMessageEventStream();
  queueMicrotask(() => {
    stream.push({ type: "error", reason: "error", error: message });
    stream.end(message);
  });
  return stream;
}

/** A finished assistant text message attributed to `model` (no usage). */
export function syntheticAssistantMessage(model: Model<Api>, text: string): AssistantMessage {
  return {
    role: "assistant",
    content: [{ type: "text", text }],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: zeroUsage(),
    stopReason: "stop",
    timestamp: Date.now(),
  };
}

/**
 * Calls `onIdle` once if `stream` goes `idleMs` without an event before it ends: a model whose
 * answer stalled after its headers (a proxy that keeps the connection alive with comments, a
 * provider that hangs mid-answer) would otherwise hold its thread "running" until the HTTP
 * client gives up, or for ever. One timer per request, re-armed only when it fires early; an
 * event costs a clock read.
 */
export function watchStreamIdle(
  stream: AssistantMessageEventStream,
  idleMs: number,
  onIdle: () => void,
): void {
  let last = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const arm = (ms: number) => {
    timer = setTimeout(check, ms);
    timer.unref();
  };
  const check = () => {
    const quiet = performance.now() - last;
    if (quiet < idleMs) arm(idleMs - quiet);
    else onIdle();
  };
  // Only `check` re-arms, and only from its own timer: clearing the current one ends the watch.
  const stop = () => clearTimeout(timer);
  arm(idleMs);
  const { push, end } = stream;
  stream.push = function (this: AssistantMessageEventStream, event) {
    last = performance.now();
    if (event.type === "done" || event.type === "error") stop();
    push.call(this, event);
  };
  stream.end = function (this: AssistantMessageEventStream, result) {
    stop();
    end.call(this, result);
  };
}

/** What a run or a summary that went quiet for `idleMs` ends with. */
export function idleMessage(idleMs: number): string {
  return `The model sent nothing for ${idleMs / 1000} s, so its request was stopped (GUPPY_STREAM_IDLE_TIMEOUT_SECONDS).`;
}

/**
 * Starts a request (`start`, with the signal it must use) that stops itself when its answer
 * goes quiet for `idleMs`: it gets an abort of its own, chained to the caller's `signal` (a
 * user's /stop still ends it as stopped), and a quiet answer ends as an error saying why.
 * For rare requests (compaction summaries); a run's requests are stopped through the run's own
 * abort (loop-agent.ts).
 */
export function stopWhenQuiet(
  start: (signal: AbortSignal) => ReturnType<StreamFn>,
  signal: AbortSignal | undefined,
  idleMs: number,
): ReturnType<StreamFn> {
  const own = new AbortController();
  const relay = () => own.abort();
  if (signal?.aborted) own.abort();
  else signal?.addEventListener("abort", relay, { once: true });
  let quiet = false;
  return whenStream(start(own.signal), (stream) => {
    watchStreamIdle(stream, idleMs, () => {
      quiet = true;
      own.abort();
    });
    // The answer's result is its terminal event's message: say why it ended.
    const { push, end } = stream;
    stream.push = function (this: AssistantMessageEventStream, event) {
      push.call(
        this,
        quiet && event.type === "error"
          ? {
              type: "error",
              reason: "error",
              error: { ...event.error, stopReason: "error", errorMessage: idleMessage(idleMs) },
            }
          : event,
      );
    };
    stream.end = function (this: AssistantMessageEventStream, result) {
      signal?.removeEventListener("abort", relay);
      end.call(this, result);
    };
  });
}

/** Calls `use` on the stream a stream function returns, now or once its promise resolves. */
export function whenStream(
  answer: ReturnType<StreamFn>,
  use: (stream: AssistantMessageEventStream) => void,
): ReturnType<StreamFn> {
  const withUse = (stream: AssistantMessageEventStream) => {
    use(stream);
    return stream;
  };
  return answer instanceof Promise ? answer.then(withUse) : withUse(answer);
}
