import {
  Agent,
  type AgentMessage,
  type AgentTool,
  type StreamFn,
} from "@mariozechner/pi-agent-core";
import type { Api, ImageContent, Message, Model, Usage } from "@mariozechner/pi-ai";
import { type Logger, silentLogger } from "../logging/logger.js";
import type { Store } from "../store/create-store.js";
import { createStreamFn, syntheticAssistantMessage } from "./create-stream-fn.js";
import { isAssistant, isLlmMessage, messageText, oneLine } from "./message-text.js";
import {
  addUsage,
  emptyTotals,
  type RunnerEvent,
  type RunnerEventListener,
  type RunStopReason,
  type UsageTotals,
} from "./runner-events.js";

export interface PromptInput {
  text: string;
  images?: ImageContent[];
  /** Who sent it, for log.jsonl. */
  messageId?: string;
  userId?: string;
  userName?: string;
}

export interface RunResult {
  text: string;
  stopReason: RunStopReason;
  errorMessage?: string;
  /** Usage of this run's requests. */
  usage: UsageTotals;
}

export interface RunnerStats {
  messages: number;
  /** Usage of the last request (its input is about the size of the context). */
  lastUsage?: Usage;
  /** Sums over every assistant message in the thread's context. */
  totals: UsageTotals;
  running: boolean;
}

export interface AgentRunner {
  readonly threadId: string;
  readonly model: Model<Api>;
  readonly running: boolean;
  /** One user message → the full tool loop → the final text. Never throws for provider errors. */
  prompt(input: PromptInput): Promise<RunResult>;
  /** Stops the LLM stream and kills running tools; the partial answer is kept. */
  abort(): void;
  /** Injects a message into the running agent (taken after the current tool batch). False if idle. */
  steer(text: string): boolean;
  subscribe(listener: RunnerEventListener): () => void;
  messages(): readonly AgentMessage[];
  /** Archives the context and starts fresh (/new). */
  reset(): string | undefined;
  stats(): RunnerStats;
}

export interface AgentRunnerOptions {
  threadId: string;
  store: Store;
  model: Model<Api>;
  apiKey?: string;
  /** Rebuilt before every run (memory and skills may change between runs). */
  systemPrompt: string | (() => string);
  tools: AgentTool[];
  maxToolRounds: number;
  maxRetries: number;
  /** Reply token limit. */
  maxTokens?: number;
  /** Context-window management hook, run before every request (see the context engine). */
  transformContext?: (messages: AgentMessage[], signal?: AbortSignal) => Promise<AgentMessage[]>;
  logger?: Logger;
  /** Replaces pi-ai's streamSimple (unit tests). */
  baseStreamFn?: StreamFn;
}

const toolRoundsNote = (n: number) =>
  `I stopped after ${n} tool rounds (the GUPPY_MAX_TOOL_ROUNDS limit) before finishing. Tell me to continue if you want me to go on.`;

export function createAgentRunner(options: AgentRunnerOptions): AgentRunner {
  const { threadId, store, model } = options;
  const logger = options.logger ?? silentLogger;
  const listeners = new Set<RunnerEventListener>();
  const emit = (event: RunnerEvent) => {
    for (const listener of listeners) {
      try {
        listener(event);
      } catch (error) {
        logger.warn("A runner event listener threw", { error: String(error) });
      }
    }
  };

  let running = false;
  let toolRounds = 0;
  let limitReached = false;
  let thinking = false;
  let runUsage = emptyTotals();

  const loaded = store.loadContext(threadId);
  let persisted = loaded.length;
  let totals = loaded.reduce(
    (acc, m) => (isAssistant(m) && m.usage ? addUsage(acc, m.usage) : acc),
    emptyTotals(),
  );

  const endThinking = () => {
    if (thinking) {
      thinking = false;
      emit({ type: "thinking_end" });
    }
  };

  const agent = new Agent({
    initialState: { model, messages: loaded, tools: options.tools, thinkingLevel: "off" },
    convertToLlm: (messages) => messages.filter(isLlmMessage) as Message[],
    transformContext: options.transformContext,
    streamFn: createStreamFn({
      apiKey: options.apiKey,
      maxTokens: options.maxTokens,
      maxRetries: options.maxRetries,
      base: options.baseStreamFn,
      intercept: (m) =>
        limitReached ? syntheticAssistantMessage(m, toolRoundsNote(toolRounds)) : undefined,
      onRequest: () => {
        thinking = true;
        emit({ type: "thinking_start" });
      },
    }),
    sessionId: threadId,
    toolExecution: "sequential",
  });

  const persist = () => {
    const messages = agent.state.messages;
    if (messages.length > persisted) {
      try {
        store.appendContext(threadId, messages.slice(persisted));
        persisted = messages.length;
      } catch (error) {
        logger.error(`Could not save the context of ${threadId}`, { error: String(error) });
      }
    }
  };

  agent.subscribe((event) => {
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
        if (isAssistant(event.message)) {
          endThinking();
          const usage = event.message.usage;
          if (usage && event.message.stopReason !== "error") {
            totals = addUsage(totals, usage);
            runUsage = addUsage(runUsage, usage);
            emit({ type: "usage", usage, totals });
          }
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
      case "tool_execution_end": {
        const content = (event.result as { content?: Array<{ type: string; text?: string }> })
          ?.content;
        const text = Array.isArray(content)
          ? content.map((c) => (c.type === "text" ? (c.text ?? "") : `[${c.type}]`)).join("")
          : String(event.result ?? "");
        emit({
          type: "tool_result",
          toolCallId: event.toolCallId,
          name: event.toolName,
          isError: event.isError,
          text,
        });
        break;
      }
      case "turn_end":
        if (event.toolResults.length > 0) {
          toolRounds++;
          if (toolRounds >= options.maxToolRounds) limitReached = true;
        }
        persist();
        break;
      case "agent_end":
        endThinking();
        persist();
        break;
    }
  });

  return {
    threadId,
    model,
    get running() {
      return running;
    },

    async prompt(input) {
      if (running) throw new Error(`A run is already active on ${threadId}.`);
      running = true;
      toolRounds = 0;
      limitReached = false;
      runUsage = emptyTotals();
      const startIndex = agent.state.messages.length;
      try {
        agent.state.systemPrompt =
          typeof options.systemPrompt === "function"
            ? options.systemPrompt()
            : options.systemPrompt;
        safeLog(() =>
          store.appendLog(threadId, {
            date: new Date().toISOString(),
            messageId: input.messageId ?? `local-${Date.now()}`,
            userId: input.userId ?? "local",
            userName: input.userName ?? "user",
            text: input.text,
            isBot: false,
          }),
        );
        emit({ type: "run_start", threadId, text: input.text });
        try {
          await agent.prompt(input.text, input.images);
        } catch (error) {
          logger.error(`Run failed on ${threadId}`, { error: String(error) });
          emit({ type: "error", kind: "internal", message: oneLine(String(error)) });
        }
        persist();
        const result = summarize(agent.state.messages.slice(startIndex));
        if (result.stopReason === "error" && result.errorMessage) {
          emit({ type: "error", kind: "provider", message: result.errorMessage });
        }
        if (result.stopReason === "max_tool_rounds") {
          emit({ type: "error", kind: "tool_rounds", message: toolRoundsNote(toolRounds) });
        }
        if (result.text !== "") {
          safeLog(() =>
            store.appendLog(threadId, {
              date: new Date().toISOString(),
              messageId: `bot-${Date.now()}`,
              userId: "guppy",
              userName: "guppy",
              text: result.text,
              isBot: true,
            }),
          );
        }
        emit({
          type: "run_end",
          text: result.text,
          stopReason: result.stopReason,
          ...(result.errorMessage ? { errorMessage: result.errorMessage } : {}),
        });
        return result;
      } finally {
        agent.clearAllQueues();
        running = false;
        endThinking();
      }
    },

    abort() {
      if (running) {
        agent.abort();
        agent.clearAllQueues();
      }
    },

    steer(text) {
      if (!running) return false;
      agent.steer({ role: "user", content: text, timestamp: Date.now() });
      return true;
    },

    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    messages: () => agent.state.messages,

    reset() {
      if (running) throw new Error("Cannot start a new conversation while a run is active.");
      const archived = store.archiveContext(threadId);
      agent.state.messages = [];
      persisted = 0;
      totals = emptyTotals();
      return archived;
    },

    stats: () => ({
      messages: agent.state.messages.length,
      lastUsage: lastUsage(agent.state.messages),
      totals,
      running,
    }),
  };

  function summarize(newMessages: AgentMessage[]): RunResult {
    const last = [...newMessages].reverse().find(isAssistant);
    if (!last)
      return {
        text: "",
        stopReason: "error",
        errorMessage: "The model gave no answer.",
        usage: runUsage,
      };
    const text = messageText(last);
    if (limitReached && last.stopReason === "stop") {
      return { text, stopReason: "max_tool_rounds", usage: runUsage };
    }
    switch (last.stopReason) {
      case "error":
        return {
          text,
          stopReason: "error",
          errorMessage: oneLine(last.errorMessage ?? "The model request failed."),
          usage: runUsage,
        };
      case "aborted":
        return { text, stopReason: "aborted", usage: runUsage };
      case "length":
        return { text, stopReason: "length", usage: runUsage };
      default:
        return { text, stopReason: "stop", usage: runUsage };
    }
  }

  function safeLog(write: () => void) {
    try {
      write();
    } catch (error) {
      logger.error(`Could not write the log of ${threadId}`, { error: String(error) });
    }
  }
}

function lastUsage(messages: readonly AgentMessage[]): Usage | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (isAssistant(m) && m.stopReason !== "error" && m.usage && m.usage.totalTokens > 0)
      return m.usage;
  }
  return undefined;
}
