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
  let ended = false;
  let timer: NodeJS.Timeout | undefined;
  const arm = (ms: number) => {
    timer = setTimeout(check, ms);
    timer.unref();
  };
  const check = () => {
    if (ended) return;
    const quiet = performance.now() - last;
    if (quiet < idleMs) arm(idleMs - quiet);
    else onIdle();
  };
  const stop = () => {
    ended = true;
    clearTimeout(timer);
  };
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
