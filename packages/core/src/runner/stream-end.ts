import type {
  AssistantMessage,
  AssistantMessageEvent,
  AssistantMessageEventStream,
} from "@mariozechner/pi-ai";

/**
 * The wire APIs whose pi-ai provider sets the answer's `stopReason` only when the provider said
 * why the answer ended (Chat Completions' `finish_reason`, Anthropic's `message_delta`
 * `stop_reason`, the Responses API's `response.completed`, Azure's too). Other providers (the
 * faux one in tests, Google's, Bedrock's, Codex's) are not judged.
 */
const JUDGED_APIS = new Set([
  "openai-completions",
  "anthropic-messages",
  "openai-responses",
  "azure-openai-responses",
]);

/**
 * What pi-ai's Anthropic provider throws when a stream that started ends before `message_stop`
 * (pi-ai 0.73.1, anthropic.js): the same cut, reported as an error rather than as `stop`.
 */
const ANTHROPIC_CUT = "Anthropic stream ended before message_stop";

/** The error note of an answer whose stream ended without saying why. */
export const CUT_STREAM_MESSAGE =
  "The provider's answer was cut off mid-stream (its stream ended without a finish reason).";

export interface StreamEndWatch {
  /**
   * Whether the provider said why the answer ended, once its stream has ended: true, false (it
   * stopped without a finish reason: a cut stream) or undefined (this stream is not judged).
   */
  finished(): boolean | undefined;
}

/**
 * Learns whether a provider stream ended with a finish reason. pi-ai gives no trace of it: its
 * providers start the answer with `stopReason: "stop"` and overwrite it when a finish reason
 * comes, so an answer whose stream was cut ends as a whole one. The answer object is handed out
 * with the `start` event, pushed before any chunk is read: at that push `stopReason` becomes an
 * accessor that notes the provider's assignment, and turns back into a plain property when the
 * stream ends (the stored answer is an ordinary object). Call before the stream's first push
 * (right after the stream function returned it); a stream already started is not judged.
 */
export function watchStreamEnd(stream: AssistantMessageEventStream): StreamEndWatch {
  let judged = false;
  let told = false;
  let ended = false;
  let answer: AssistantMessage | undefined;
  const { push } = stream;
  stream.push = function (this: AssistantMessageEventStream, event: AssistantMessageEvent) {
    if (event.type === "start" && !answer && JUDGED_APIS.has(event.partial.api)) {
      answer = event.partial;
      judged = noteAssignments(answer, () => {
        told = true;
      });
    }
    if (event.type === "done" || event.type === "error") {
      ended = true;
      if (answer && judged) settle(answer);
    }
    push.call(this, event);
  };
  return { finished: () => (judged && ended ? told : undefined) };
}

/**
 * Whether an answer that ended in `error` is a stream that stopped before its end, as pi-ai's
 * Anthropic provider reports one that began and never sent `message_stop`.
 */
export function isCutError(message: AssistantMessage): boolean {
  return message.stopReason === "error" && message.errorMessage === ANTHROPIC_CUT;
}

/** Makes `stopReason` an accessor calling `onSet` on each assignment; false if it cannot. */
function noteAssignments(answer: AssistantMessage, onSet: () => void): boolean {
  const own = Object.getOwnPropertyDescriptor(answer, "stopReason");
  if (!own?.configurable || !("value" in own)) return false;
  let value = own.value as AssistantMessage["stopReason"];
  Object.defineProperty(answer, "stopReason", {
    configurable: true,
    enumerable: own.enumerable,
    get: () => value,
    set: (next: AssistantMessage["stopReason"]) => {
      value = next;
      onSet();
    },
  });
  return true;
}

/** Turns `stopReason` back into a plain property holding its last value. */
function settle(answer: AssistantMessage): void {
  const value = answer.stopReason;
  Object.defineProperty(answer, "stopReason", {
    configurable: true,
    enumerable: true,
    writable: true,
    value,
  });
}
