import type { StreamFn } from "@mariozechner/pi-agent-core";
import {
  type Api,
  type AssistantMessage,
  type CacheRetention,
  createAssistantMessageEventStream,
  type Model,
  streamSimple,
} from "@mariozechner/pi-ai";
import { zeroUsage } from "./message-text.js";
import { stopWhenQuiet, watchStreamIdle, whenStream } from "./stream-idle-watch.js";

export interface StreamFnOptions {
  apiKey?: string;
  maxTokens?: number;
  /** Client-side retries on 429/5xx/network errors (the provider SDKs back off and honour retry-after). */
  maxRetries: number;
  cacheRetention?: CacheRetention;
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
 * (reply limit, retries, API key, cache markers) and lets the runner answer without a request
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
    const request = {
      ...streamOptions,
      ...(options.apiKey ? { apiKey: options.apiKey } : {}),
      ...(options.maxTokens ? { maxTokens: options.maxTokens } : {}),
      maxRetries: options.maxRetries,
      cacheRetention: options.cacheRetention ?? "short",
    };
    const { idleTimeoutMs, onIdle } = options;
    if (!idleTimeoutMs) return base(model, context, request);
    if (onIdle)
      return whenStream(base(model, context, request), (stream) =>
        watchStreamIdle(stream, idleTimeoutMs, onIdle),
      );
    return stopWhenQuiet(
      (signal) => base(model, context, { ...request, signal }),
      streamOptions?.signal,
      idleTimeoutMs,
    );
  };
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
