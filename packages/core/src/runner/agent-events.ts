import type { AgentEvent, AgentMessage, StreamFn } from "@mariozechner/pi-agent-core";
import { type Message, streamSimple, type Usage } from "@mariozechner/pi-ai";
import { emptyTotals } from "../context/usage-totals.js";
import type { Redactor } from "../logging/redact.js";
import { markPromptSourcesStale } from "../prompt/prompt-sources.js";
import type { RunnerEvent, UsageTotals } from "../types.js";
import { idleMessage } from "./create-stream-fn.js";
import { isAssistant, messageText, oneLine } from "./message-text.js";

// A run as the runner sees it: pi-agent-core's events in, runner events and a result out.

/** One run's counters, fresh at each prompt. */
export interface RunState {
  toolRounds: number;
  /** The tool-round limit was reached: the next model request is answered with a note. */
  limitReached: boolean;
  /** Usage of this run's requests (summaries included). */
  usage: UsageTotals;
  /** Messages of the run, in order (the agent's state may be rewritten by a compaction). */
  messages: AgentMessage[];
  abortRequested: boolean;
  /** The run's model request went quiet for the idle timeout and was stopped. */
  stalled: boolean;
}

export function newRunState(): RunState {
  return {
    toolRounds: 0,
    limitReached: false,
    usage: emptyTotals(),
    messages: [],
    abortRequested: false,
    stalled: false,
  };
}

/** Lines of a running tool's output a `tool_output` event carries (its last ones). */
export const TOOL_OUTPUT_LINES = 8;
/** Characters of them at most (a line of minified JSON is no "line"). */
const TOOL_OUTPUT_CHARS = 1_000;
/** At most one `tool_output` per call this often: a chatty command must not flood a stream. */
export const TOOL_OUTPUT_INTERVAL_MS = 250;

/** The last lines of a tool's output so far, as a `tool_output` event shows them. */
export function lastOutputLines(text: string): string {
  const lines = text.replace(/\s+$/, "").split("\n");
  const last = lines.slice(-TOOL_OUTPUT_LINES).join("\n");
  if (last.length <= TOOL_OUTPUT_CHARS) return last;
  // Cut at a line's start where there is one: a line cut in two could hold half a secret, which
  // the redactor (matching whole values) would not know.
  const tail = last.slice(-TOOL_OUTPUT_CHARS);
  const start = tail.indexOf("\n");
  return start === -1 ? tail : tail.slice(start + 1);
}

/** The text of a tool result (or a partial one): its text parts, other parts as `[type]`. */
function resultText(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> })?.content;
  return Array.isArray(content)
    ? content.map((c) => (c.type === "text" ? (c.text ?? "") : `[${c.type}]`)).join("")
    : String(result ?? "");
}

export const toolRoundsNote = (n: number) =>
  `I stopped after ${n} tool rounds (the GUPPY_MAX_TOOL_ROUNDS limit) before finishing. Tell me to continue if you want me to go on.`;

/**
 * Turns pi-agent-core's events into runner events (text, thinking start and end, usage, tool
 * calls and results), counts tool rounds, and has new messages saved after each turn.
 */
export function createEventTranslator(deps: {
  run: () => RunState;
  maxToolRounds: number;
  emit: (event: RunnerEvent) => void;
  /** A request's usage: added to the thread's and the run's totals. */
  countUsage: (usage: Usage) => void;
  persist: () => void;
}) {
  const { emit } = deps;
  let thinking = false;
  /** Per running call: when its output was last shown, and the update waiting for its turn. */
  const outputs = new Map<
    string,
    { shownAt: number; timer?: NodeJS.Timeout; pending?: () => void }
  >();
  const showOutput = (id: string, name: string, text: string) => {
    const state = outputs.get(id) ?? { shownAt: 0 };
    outputs.set(id, state);
    const show = () => {
      state.timer = undefined;
      state.pending = undefined;
      state.shownAt = Date.now();
      const lines = lastOutputLines(text);
      if (lines !== "") emit({ type: "tool_output", toolCallId: id, name, text: lines });
    };
    const wait = state.shownAt + TOOL_OUTPUT_INTERVAL_MS - Date.now();
    if (wait <= 0) show();
    else {
      // The latest output is shown when the interval is up (an earlier one waiting is replaced).
      state.pending = show;
      state.timer ??= setTimeout(() => state.pending?.(), wait);
      state.timer.unref?.();
    }
  };
  const endOutput = (id: string) => {
    const state = outputs.get(id);
    if (state?.timer) clearTimeout(state.timer);
    outputs.delete(id);
  };
  const startThinking = () => {
    thinking = true;
    emit({ type: "thinking_start" });
  };
  const endThinking = () => {
    if (thinking) {
      thinking = false;
      emit({ type: "thinking_end" });
    }
  };

  const handle = (event: AgentEvent): void => {
    switch (event.type) {
      case "message_update": {
        const e = event.assistantMessageEvent;
        if (e.type === "text_delta") {
          endThinking();
          emit({ type: "text_delta", delta: e.delta });
        } else if (e.type === "toolcall_start" || e.type === "thinking_start") {
          endThinking();
        }
        break;
      }
      case "message_end": {
        deps.run().messages.push(event.message);
        if (isAssistant(event.message)) {
          endThinking();
          const usage = event.message.usage;
          if (usage && event.message.stopReason !== "error") deps.countUsage(usage);
        }
        break;
      }
      case "tool_execution_start":
        emit({
          type: "tool_call",
          toolCallId: event.toolCallId,
          name: event.toolName,
          args: event.args,
        });
        break;
      case "tool_execution_update":
        showOutput(event.toolCallId, event.toolName, resultText(event.partialResult));
        break;
      case "tool_execution_end": {
        // Its result says the rest: no late output after it.
        endOutput(event.toolCallId);
        // The tool may have written memory, notes or skills: the next run reads them afresh.
        markPromptSourcesStale();
        const text = resultText(event.result);
        emit({
          type: "tool_result",
          toolCallId: event.toolCallId,
          name: event.toolName,
          isError: event.isError,
          text,
        });
        break;
      }
      case "turn_end": {
        const run = deps.run();
        if (event.toolResults.length > 0) {
          run.toolRounds++;
          if (run.toolRounds >= deps.maxToolRounds) run.limitReached = true;
        }
        deps.persist();
        break;
      }
      case "agent_end":
        for (const id of [...outputs.keys()]) endOutput(id);
        endThinking();
        deps.persist();
        break;
    }
  };
  return { handle, startThinking, endThinking };
}

/**
 * `emit` with configured secrets taken out of every event. Text deltas go through one stream
 * redactor: a tail that may be the start of a secret waits for the next delta, and is released
 * before any other event (a tool call, the usage at the answer's end, the run's end).
 */
export function redactEvents(
  redactor: Redactor,
  emit: (event: RunnerEvent) => void,
): (event: RunnerEvent) => void {
  if (!redactor.active) return emit;
  let text = redactor.stream();
  return (event) => {
    if (event.type === "text_delta") {
      const delta = text.push(event.delta);
      if (delta !== "") emit({ type: "text_delta", delta });
      return;
    }
    const held = text.end();
    if (held !== "") emit({ type: "text_delta", delta: held });
    text = redactor.stream();
    emit(redactor.value(event));
  };
}

/**
 * `base` (pi-ai's streamSimple by default) sending every request with configured secrets taken
 * out of its messages and system prompt: the run's context keeps what the model and tools
 * really said (a tool call runs as asked), the provider never gets a key. Summaries too.
 * A message is walked once, not at every request of the runs that resend it: its redacted form
 * is kept beside it (messages are not changed once in the transcript).
 */
export function redactRequests(redactor: Redactor, base: StreamFn = streamSimple): StreamFn {
  if (!redactor.active) return base;
  const redacted = new WeakMap<object, Message>();
  const redact = (message: Message): Message => {
    let out = redacted.get(message);
    if (out === undefined) {
      out = redactor.value(message);
      redacted.set(message, out);
    }
    return out;
  };
  return (model, context, options) =>
    base(
      model,
      {
        ...context,
        systemPrompt: context.systemPrompt && redactor.text(context.systemPrompt),
        messages: context.messages.map(redact),
      },
      options,
    );
}

/** How a run ended, from its last assistant message. */
export function runResult(run: RunState, idleTimeoutMs: number) {
  const usage = run.usage;
  const last = [...run.messages].reverse().find(isAssistant);
  if (!last) {
    return {
      text: "",
      stopReason: "error" as const,
      errorMessage: "The model gave no answer.",
      usage,
    };
  }
  const text = messageText(last);
  if (run.limitReached && last.stopReason === "stop") {
    return { text, stopReason: "max_tool_rounds" as const, usage };
  }
  switch (last.stopReason) {
    case "error":
      return {
        text,
        stopReason: "error" as const,
        errorMessage: oneLine(last.errorMessage ?? "The model request failed."),
        usage,
      };
    case "aborted":
      if (run.stalled) {
        return {
          text,
          stopReason: "error" as const,
          errorMessage: idleMessage(idleTimeoutMs),
          usage,
        };
      }
      return { text, stopReason: "aborted" as const, usage };
    case "length":
      return { text, stopReason: "length" as const, usage };
    default:
      return { text, stopReason: "stop" as const, usage };
  }
}

/** The usage of the context's last successful request. */
export function lastUsage(messages: readonly AgentMessage[]): Usage | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (isAssistant(m) && m.stopReason !== "error" && m.usage && m.usage.totalTokens > 0)
      return m.usage;
  }
  return undefined;
}
