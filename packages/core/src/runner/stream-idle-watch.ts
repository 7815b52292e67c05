import type { StreamFn } from "@mariozechner/pi-agent-core";
import type { AssistantMessageEventStream } from "@mariozechner/pi-ai";

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
