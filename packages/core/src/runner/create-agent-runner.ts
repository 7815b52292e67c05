import { setMaxListeners } from "node:events";
import type { AgentEvent, AgentMessage, AgentTool, StreamFn } from "@mariozechner/pi-agent-core";
import type { Api, Model, Usage } from "@mariozechner/pi-ai";
import { isCompactionMessage } from "../context/compaction-message.js";
import { computeBudget } from "../context/context-budget.js";
import { createContextEngine } from "../context/create-context-engine.js";
import { createLlmMessages } from "../context/llm-messages.js";
import { isOverflowError } from "../context/overflow.js";
import { createToolResultSpill } from "../context/spill-tool-result.js";
import { addUsage, emptyTotals } from "../context/usage-totals.js";
import { type Logger, silentLogger } from "../logging/logger.js";
import { markPromptSourcesStale } from "../prompt/prompt-sources-cache.js";
import type { Store } from "../store/create-store.js";
import type {
  AgentRunner,
  CompactionOutcome,
  RunnerEvent,
  RunnerEventListener,
  RunResult,
} from "../types.js";
import { createStreamFn, syntheticAssistantMessage } from "./create-stream-fn.js";
import { createLoopAgent } from "./loop-agent.js";
import { isAssistant, messageText, oneLine } from "./message-text.js";
import { idleMessage } from "./stream-idle-watch.js";

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
  /**
   * Seconds a model's answer may send nothing before the request is stopped and the run ends
   * with an error (0 or absent: never).
   */
  streamIdleTimeoutSeconds?: number;
  /** Reply token limit. */
  maxTokens?: number;
  /** Extra context transform, run before the context engine's own on every request. */
  transformContext?: (messages: AgentMessage[], signal?: AbortSignal) => Promise<AgentMessage[]>;
  /** Compaction starts at window minus this (GUPPY_COMPACT_RESERVE_TOKENS, default 16,384). */
  compactReserveTokens?: number;
  /** Recent tokens a compaction keeps verbatim (GUPPY_COMPACT_KEEP_TOKENS, default 20,000). */
  compactKeepRecentTokens?: number;
  /** Longest tool result kept in context (GUPPY_TOOL_RESULT_MAX_CHARS, default 10,000). */
  toolResultMaxChars?: number;
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
  /** The running prompt's own listener (`PromptInput.onEvent`). */
  let runListener: RunnerEventListener | undefined;
  const call = (listener: RunnerEventListener, event: RunnerEvent) => {
    try {
      listener(event);
    } catch (error) {
      logger.warn("A runner event listener threw", { error: String(error) });
    }
  };
  const emit = (event: RunnerEvent) => {
    if (runListener) call(runListener, event);
    for (const listener of listeners) call(listener, event);
  };

  let toolRounds = 0;
  let limitReached = false;
  let thinking = false;
  let runUsage = emptyTotals();

  const loaded = store.loadContext(threadId);
  let persisted = loaded.length;
  /** Messages of the current run, in order (the state may be rewritten by a compaction). */
  let runMessages: AgentMessage[] = [];
  /** Aborts a compaction made outside the agent loop (/compact, overflow recovery). */
  let compacting: AbortController | undefined;
  let abortRequested = false;
  /** The run's model request went quiet for the idle timeout and was stopped. */
  let stalled = false;
  const idleTimeoutMs = (options.streamIdleTimeoutSeconds ?? 0) * 1000;
  let totals = loaded.reduce(
    (acc, m) => (isAssistant(m) && m.usage ? addUsage(acc, m.usage) : acc),
    // A compacted context carries the usage of what it no longer holds.
    (isCompactionMessage(loaded[0]) ? loaded[0].usageCarried : undefined) ?? emptyTotals(),
  );

  const endThinking = () => {
    if (thinking) {
      thinking = false;
      emit({ type: "thinking_end" });
    }
  };

  const budget = computeBudget({
    contextWindow: model.contextWindow,
    maxTokens: options.maxTokens ?? model.maxTokens,
    reserveTokens: options.compactReserveTokens ?? 16_384,
    keepRecentTokens: options.compactKeepRecentTokens ?? 20_000,
  });
  const engine = createContextEngine({
    model,
    budget,
    logger,
    // Summary requests: same endpoint, key and retries, no tool-round interception.
    stream: createStreamFn({
      apiKey: options.apiKey,
      maxRetries: options.maxRetries,
      base: options.baseStreamFn,
      idleTimeoutMs,
    }),
    // Before the first run the state has no prompt yet: /status and /compact count the one the
    // run will send.
    systemPrompt: () => agent.state.systemPrompt || currentSystemPrompt(),
    tools: () => agent.state.tools,
    onSummaryUsage: (usage) => {
      totals = addUsage(totals, usage);
      runUsage = addUsage(runUsage, usage);
      emit({ type: "usage", usage, totals });
    },
    onCompacted: (message, firstKept) => {
      const state = agent.state.messages;
      const k = firstKept ? state.lastIndexOf(firstKept) : -1;
      const next = k === -1 ? [message] : [message, ...state.slice(k)];
      agent.state.messages = next;
      try {
        store.saveContext(threadId, next);
        persisted = next.length;
      } catch (error) {
        logger.error(`Could not save the compacted context of ${threadId}`, {
          error: String(error),
        });
      }
      emit({
        type: "compaction",
        method: message.method,
        reason: message.reason,
        removedMessages: message.removedMessages,
        tokensBefore: message.tokensBefore,
        tokensAfter: message.tokensAfter,
      });
    },
  });

  const agent = createLoopAgent({
    model,
    messages: loaded,
    tools: options.tools,
    onEvent: handleEvent,
    convertToLlm: createLlmMessages((fixes) =>
      logger.debug(`Repaired the tool-call pairing of ${threadId}`, { fixes: fixes.join("; ") }),
    ),
    transformContext: async (messages, signal) => {
      // One run makes many requests on the same signal (each SDK call listens on it).
      if (signal) setMaxListeners(0, signal);
      const input = options.transformContext
        ? await options.transformContext(messages, signal)
        : messages;
      const out = await engine.prepare(input, signal);
      emit({ type: "context", stats: engine.stats(agent.state.messages) });
      return out;
    },
    afterToolCall: createToolResultSpill({
      maxChars: options.toolResultMaxChars ?? 10_000,
      artifactsDir: () => store.artifactsDir(threadId),
    }),
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
      idleTimeoutMs,
      onIdle: () => {
        if (!runner.running || abortRequested) return;
        logger.warn(`The model sent nothing for ${idleTimeoutMs / 1000} s on ${threadId}`);
        stalled = true;
        agent.abort();
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

  function handleEvent(event: AgentEvent): void {
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
        runMessages.push(event.message);
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
        // The tool may have written memory, notes or skills: the next run reads them afresh.
        markPromptSourcesStale();
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
  }

  // `running` is a data property the runner sets itself: an object literal with a getter is a
  // dictionary-mode object in V8 (~800 B more here, and slower lookups), one per thread.
  const runner: Omit<AgentRunner, "running"> & { running: boolean } = {
    threadId,
    model,
    running: false,

    async prompt(input) {
      if (runner.running) throw new Error(`A run is already active on ${threadId}.`);
      runner.running = true;
      runListener = input.onEvent;
      toolRounds = 0;
      limitReached = false;
      runUsage = emptyTotals();
      runMessages = [];
      abortRequested = false;
      stalled = false;
      try {
        agent.state.systemPrompt = currentSystemPrompt();
        if (!input.logged)
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
          await recoverFromOverflow();
        } catch (error) {
          logger.error(`Run failed on ${threadId}`, { error: String(error) });
          emit({ type: "error", kind: "internal", message: oneLine(String(error)) });
        }
        persist();
        const result = summarize(runMessages);
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
        runner.running = false;
        endThinking();
        runListener = undefined;
      }
    },

    abort() {
      if (runner.running) {
        abortRequested = true;
        compacting?.abort();
        agent.abort();
        agent.clearAllQueues();
      }
    },

    steer(text) {
      if (!runner.running) return false;
      agent.steer({ role: "user", content: text, timestamp: Date.now() });
      return true;
    },

    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    messages: () => agent.state.messages,

    reset() {
      if (runner.running) throw new Error("Cannot start a new conversation while a run is active.");
      const archived = store.archiveContext(threadId);
      agent.state.messages = [];
      persisted = 0;
      totals = emptyTotals();
      engine.reset();
      return archived;
    },

    async compact() {
      if (runner.running) throw new Error("Cannot compact while a run is active.");
      runner.running = true;
      abortRequested = false;
      try {
        return await compactOutsideLoop("manual");
      } finally {
        runner.running = false;
      }
    },

    stats: () => ({
      messages: agent.state.messages.length,
      lastUsage: lastUsage(agent.state.messages),
      totals,
      running: runner.running,
      context: engine.stats(agent.state.messages),
    }),
  };
  return runner;

  /**
   * A provider still answered "context too long" (its tokenizer counts more than ours): take the
   * error out, compact (the engine drops the oldest turns if the summary fails) and retry once.
   */
  async function recoverFromOverflow() {
    const state = agent.state.messages;
    const last = state[state.length - 1];
    if (!isOverflowError(last)) return;
    logger.warn(
      `The provider said the context of ${threadId} is too long; compacting and retrying`,
      {
        error: last.errorMessage ?? "",
      },
    );
    agent.state.messages = state.slice(0, -1);
    runMessages = runMessages.filter((m) => m !== last);
    engine.tighten();
    const outcome = await compactOutsideLoop("overflow");
    if (!outcome.compacted) {
      // Nothing older to summarise: the retry's request is trimmed to the tightened budget
      // instead (oldest turns dropped, then long texts cut). The error answer leaves the file.
      store.saveContext(threadId, agent.state.messages);
      persisted = agent.state.messages.length;
    }
    if (abortRequested) return;
    await agent.continue();
  }

  async function compactOutsideLoop(reason: "manual" | "overflow"): Promise<CompactionOutcome> {
    compacting = new AbortController();
    try {
      return await engine.compact(agent.state.messages, reason, compacting.signal);
    } finally {
      compacting = undefined;
    }
  }

  function currentSystemPrompt(): string {
    return typeof options.systemPrompt === "function"
      ? options.systemPrompt()
      : options.systemPrompt;
  }

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
        if (stalled)
          return {
            text,
            stopReason: "error",
            errorMessage: idleMessage(idleTimeoutMs),
            usage: runUsage,
          };
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
