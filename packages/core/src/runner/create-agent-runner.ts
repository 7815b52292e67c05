import { setMaxListeners } from "node:events";
import type { AgentMessage, AgentTool, StreamFn } from "@mariozechner/pi-agent-core";
import type { Api, Model, Usage } from "@mariozechner/pi-ai";
import { computeBudget, isOverflowError } from "../context/compaction.js";
import { isCompactionMessage } from "../context/compaction-message.js";
import { createContextEngine } from "../context/create-context-engine.js";
import { createLlmMessages } from "../context/llm-messages.js";
import { addUsage, emptyTotals } from "../context/usage-totals.js";
import { type Logger, silentLogger } from "../logging/logger.js";
import { createRedactor, type Redactor } from "../logging/redact.js";
import { createDeliveredWatch, type DeliveredWatch } from "../messaging/delivered-answer.js";
import type { Store } from "../store/create-store.js";
import { createToolResultSpill } from "../tools/spill-output.js";
import type {
  AgentRunner,
  CompactionOutcome,
  Role,
  RunnerEvent,
  RunnerEventListener,
} from "../types.js";
import {
  createEventTranslator,
  lastUsage,
  newRunState,
  redactEvents,
  redactRequests,
  runResult,
  toolRoundsNote,
} from "./agent-events.js";
import {
  type ApiKeySource,
  createStreamFn,
  syntheticAssistantMessage,
} from "./create-stream-fn.js";
import { createLoopAgent } from "./loop-agent.js";
import { isAssistant, oneLine } from "./message-text.js";
import { createQuietRunGate, isHeartbeatOk } from "./quiet-run.js";
import type { RetryNotice } from "./retry-stream.js";

export interface AgentRunnerOptions {
  threadId: string;
  store: Store;
  model: Model<Api>;
  /** The key, or where to get it at each request (create-stream-fn.ts). */
  apiKey?: ApiKeySource;
  /**
   * Rebuilt before every run (memory and skills may change between runs), for the tools that
   * run gets.
   */
  systemPrompt: string | ((tools: readonly AgentTool[]) => string);
  /** The owner's tools: what a run gets unless `toolsFor` says otherwise. */
  tools: AgentTool[];
  /** The tools a run of a sender with `role` gets (default: `tools` for everyone). */
  toolsFor?: (role: Role) => AgentTool[];
  maxToolRounds: number;
  maxRetries: number;
  /** A provider's `retry-after` longer than this fails the request at once (default 60). */
  maxRetryWaitSeconds?: number;
  /** Characters past which an answer is cut (default: no limit). */
  maxAnswerChars?: number;
  /** First retry backoff step in ms (tests; default 500). */
  retryBaseDelayMs?: number;
  /**
   * Seconds a model's answer may send nothing before the request is stopped and the run ends
   * with an error (0 or absent: never).
   */
  streamIdleTimeoutSeconds?: number;
  /** Reply token limit. */
  maxTokens?: number;
  /** Sampling temperature of every request, summaries too (absent: the provider's default). */
  temperature?: number;
  /** Extra context transform, run before the context engine's own on every request. */
  transformContext?: (messages: AgentMessage[], signal?: AbortSignal) => Promise<AgentMessage[]>;
  /** Compaction starts at window minus this (GUPPY_COMPACT_RESERVE_TOKENS, default 16,384). */
  compactReserveTokens?: number;
  /** Recent tokens a compaction keeps verbatim (GUPPY_COMPACT_KEEP_TOKENS, default 20,000). */
  compactKeepRecentTokens?: number;
  /** Longest tool result kept in context (GUPPY_TOOL_RESULT_MAX_CHARS, default 10,000). */
  toolResultMaxChars?: number;
  logger?: Logger;
  /**
   * Takes configured secrets out of what the run stores, emits and sends: tool results, answers,
   * every request's messages.
   */
  redactor?: Redactor;
  /** Replaces pi-ai's streamSimple (unit tests). */
  baseStreamFn?: StreamFn;
  /**
   * Each request's usage as it arrives (the run's and compaction summaries', a quiet heartbeat's
   * too): the usage ledger's hook. Called before the `usage` event; must not throw.
   */
  onUsage?: (usage: Usage) => void;
  /**
   * The local date and time a user message is stamped with in the context (`[Fri 2026-11-27
   * 09:14 Europe/Berlin]`), so the model knows when it was said; absent: no stamp. log.jsonl keeps
   * the text as typed.
   */
  timeStamp?: (now: Date) => string;
}

// Long by design: one closure per thread whose methods share its agent, engine and run state.
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
  const redactor = options.redactor ?? createRedactor([]);
  const emitNow = redactEvents(redactor, (event: RunnerEvent) => {
    if (runListener) call(runListener, event);
    for (const listener of listeners) call(listener, event);
  });
  /** A heartbeat run's events and messages, held until it is known to say something. */
  const quiet = createQuietRunGate(emitNow);
  /** What this run's send_message calls posted to its own thread (no answer posted twice). */
  let sent: DeliveredWatch | undefined;
  const emit = (event: RunnerEvent) => {
    sent?.see(event);
    quiet.emit(event);
  };
  /** Counts whole rewrites of context.jsonl (compactions): a quiet run then rewrites it again. */
  let rewrites = 0;
  const baseStreamFn = redactRequests(redactor, options.baseStreamFn);

  let run = newRunState();

  const loaded = store.loadContext(threadId);
  let persisted = loaded.length;
  /** Aborts a compaction made outside the agent loop (/compact, overflow recovery). */
  let compacting: AbortController | undefined;
  const idleTimeoutMs = (options.streamIdleTimeoutSeconds ?? 0) * 1000;
  // Info, not a warning: a retry that works is routine (`chat -m` prints warnings).
  const onRetry = (retry: RetryNotice) =>
    logger.info(
      `Model request of ${threadId} failed; retry ${retry.attempt} of ${options.maxRetries} in ${(retry.waitMs / 1000).toFixed(1)} s`,
      {
        ...(retry.status !== undefined ? { status: retry.status } : {}),
        error: oneLine(retry.error).slice(0, 300),
      },
    );
  // How every model request of this thread is sent (the run's, and compaction summaries'):
  // key, retries and their waits, the answer cap, secrets taken out.
  const requests = {
    apiKey: options.apiKey,
    maxRetries: options.maxRetries,
    maxRetryWaitSeconds: options.maxRetryWaitSeconds,
    maxAnswerChars: options.maxAnswerChars,
    retryBaseDelayMs: options.retryBaseDelayMs,
    temperature: options.temperature,
    onRetry,
    base: baseStreamFn,
  };
  let totals = loaded.reduce(
    (acc, m) => (isAssistant(m) && m.usage ? addUsage(acc, m.usage) : acc),
    // A compacted context carries the usage of what it no longer holds.
    (isCompactionMessage(loaded[0]) ? loaded[0].usageCarried : undefined) ?? emptyTotals(),
  );

  const countUsage = (usage: Usage) => {
    options.onUsage?.(usage);
    totals = addUsage(totals, usage);
    run.usage = addUsage(run.usage, usage);
    emit({ type: "usage", usage, totals });
  };
  const events = createEventTranslator({
    run: () => run,
    maxToolRounds: options.maxToolRounds,
    emit,
    countUsage,
    persist: () => persist(),
  });

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
    stream: createStreamFn({ ...requests, idleTimeoutMs }),
    // Before the first run the state has no prompt yet: /status and /compact count the one the
    // run will send.
    systemPrompt: () => agent.state.systemPrompt || currentSystemPrompt(),
    tools: () => agent.state.tools,
    onSummaryUsage: countUsage,
    onCompacted: (message, firstKept) => {
      const state = agent.state.messages;
      const k = firstKept ? state.lastIndexOf(firstKept) : -1;
      const next = k === -1 ? [message] : [message, ...state.slice(k)];
      agent.state.messages = next;
      try {
        rewrites++;
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
    onEvent: events.handle,
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
      redactor,
    }),
    streamFn: createStreamFn({
      ...requests,
      maxTokens: options.maxTokens,
      intercept: (m) =>
        run.limitReached ? syntheticAssistantMessage(m, toolRoundsNote(run.toolRounds)) : undefined,
      onRequest: events.startThinking,
      idleTimeoutMs,
      onIdle: () => {
        if (!runner.running || run.abortRequested) return;
        logger.warn(`The model sent nothing for ${idleTimeoutMs / 1000} s on ${threadId}`);
        run.stalled = true;
        agent.abort();
      },
    }),
    sessionId: threadId,
    toolExecution: "sequential",
  });

  const persist = () => {
    if (quiet.holding) return;
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
      run = newRunState();
      // A heartbeat's exchange is kept (saved, logged, shown) only if it says something.
      const heartbeat = input.origin?.kind === "heartbeat";
      const rewritesBefore = rewrites;
      sent = createDeliveredWatch(threadId);
      try {
        agent.state.tools = options.toolsFor?.(input.role ?? "owner") ?? options.tools;
        agent.state.systemPrompt = currentSystemPrompt();
        const promptDate = new Date();
        const logPrompt = () => {
          if (!input.logged)
            safeLog(() =>
              store.appendLog(threadId, {
                date: promptDate.toISOString(),
                messageId: input.messageId ?? `local-${promptDate.getTime()}`,
                userId: input.userId ?? "local",
                userName: input.userName ?? "user",
                text: input.text,
                isBot: false,
              }),
            );
        };
        // A heartbeat's prompt is logged once the beat is kept (it said something, or was steered).
        quiet.start(heartbeat, logPrompt);
        if (!heartbeat) logPrompt();
        emit({ type: "run_start", threadId, text: input.text });
        try {
          await agent.prompt(stamped(input.text, promptDate), input.images);
          await recoverFromOverflow();
        } catch (error) {
          logger.error(`Run failed on ${threadId}`, { error: String(error) });
          emit({ type: "error", kind: "internal", message: oneLine(String(error)) });
        }
        const outcome = runResult(run, idleTimeoutMs);
        // Nothing for the user (or a beat that failed or was stopped): the exchange leaves no
        // trace, so the next beat's request is what this one's was.
        // A beat a person steered is a conversation: it is kept whatever it ended with.
        const nothingToSay =
          heartbeat &&
          !quiet.steered &&
          (outcome.stopReason === "error" ||
            outcome.stopReason === "aborted" ||
            isHeartbeatOk(outcome.text));
        if (nothingToSay) {
          quiet.drop();
          dropRun(rewrites !== rewritesBefore);
          logger.info(`Heartbeat on ${threadId}: nothing for the user (${outcome.stopReason})`, {
            ...(outcome.errorMessage ? { error: outcome.errorMessage } : {}),
          });
          emit({ type: "run_end", text: "", stopReason: outcome.stopReason, quiet: true });
          return redactor.value({ ...outcome, text: "" });
        }
        quiet.release();
        persist();
        const result = redactor.value(outcome);
        if (result.stopReason === "error" && result.errorMessage) {
          emit({ type: "error", kind: "provider", message: result.errorMessage });
        }
        if (result.stopReason === "max_tool_rounds") {
          emit({ type: "error", kind: "tool_rounds", message: toolRoundsNote(run.toolRounds) });
        }
        const delivered = sent.delivered(result.text);
        if (result.text !== "" && !delivered) {
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
          ...(delivered ? { delivered: true as const } : {}),
        });
        return result;
      } finally {
        quiet.end();
        agent.clearAllQueues();
        runner.running = false;
        events.endThinking();
        runListener = undefined;
      }
    },

    abort() {
      if (runner.running) {
        run.abortRequested = true;
        compacting?.abort();
        agent.abort();
        agent.clearAllQueues();
      }
    },

    steer(text) {
      if (!runner.running) return false;
      const now = new Date();
      agent.steer({ role: "user", content: stamped(text, now), timestamp: now.getTime() });
      // Steering a heartbeat makes it a conversation: shown as it goes, kept, never dropped quiet.
      quiet.steer();
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
      run.abortRequested = false;
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
    run.messages = run.messages.filter((m) => m !== last);
    engine.tighten();
    const outcome = await compactOutsideLoop("overflow");
    if (!outcome.compacted) {
      // Nothing older to summarise: the retry's request is trimmed to the tightened budget
      // instead (oldest turns dropped, then long texts cut). The error answer leaves the file.
      rewrites++;
      store.saveContext(threadId, agent.state.messages);
      persisted = agent.state.messages.length;
    }
    if (run.abortRequested) return;
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

  /** `text` as the context stores it: after the local time it was sent at, when stamping is on. */
  function stamped(text: string, now: Date): string {
    return options.timeStamp ? `${options.timeStamp(now)} ${text}` : text;
  }

  /**
   * Takes the current run's messages out of the context. Nothing of it was appended to
   * context.jsonl; a compaction during it rewrote the file with them, so it is rewritten again.
   */
  function dropRun(rewritten: boolean) {
    const own = new Set(run.messages);
    const kept = agent.state.messages.filter((m) => !own.has(m));
    agent.state.messages = kept;
    if (rewritten) {
      try {
        store.saveContext(threadId, kept);
      } catch (error) {
        logger.error(`Could not save the context of ${threadId}`, { error: String(error) });
      }
    }
    persisted = kept.length;
  }

  function currentSystemPrompt(): string {
    return typeof options.systemPrompt === "function"
      ? options.systemPrompt(agent.state.tools)
      : options.systemPrompt;
  }

  function safeLog(write: () => void) {
    try {
      write();
    } catch (error) {
      logger.error(`Could not write the log of ${threadId}`, { error: String(error) });
    }
  }
}
