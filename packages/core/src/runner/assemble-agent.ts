import { setMaxListeners } from "node:events";
import type { AgentMessage } from "@mariozechner/pi-agent-core";
import { computeBudget } from "../context/compaction.js";
import { createContextEngine } from "../context/create-context-engine.js";
import { createLlmMessages } from "../context/llm-messages.js";
import { createToolResultSpill } from "../tools/spill-output.js";
import { createEventTranslator, redactRequests, toolRoundsNote } from "./agent-events.js";
import type { AgentThread, ThreadAgent } from "./agent-thread.js";
import { createStreamFn, syntheticAssistantMessage } from "./create-stream-fn.js";
import { createLoopAgent, type LoopAgent } from "./loop-agent.js";
import { oneLine } from "./message-text.js";
import type { RetryNotice } from "./retry-stream.js";

/**
 * Builds a thread's agent loop, its context engine and the translator of the loop's events,
 * wired to `thread`: how every model request is sent (key, retries and their waits, the answer
 * cap, secrets taken out), when the context is compacted, and where tool output spills.
 * `isRunning`: whether the runner has a run (a stalled stream stops only a run).
 */
export function assembleAgent(
  thread: AgentThread,
  loaded: AgentMessage[],
  isRunning: () => boolean,
): ThreadAgent {
  const { options, threadId, store, logger, redactor, idleTimeoutMs, emit } = thread;
  const { model } = options;
  const baseStreamFn = redactRequests(redactor, options.baseStreamFn);
  // Info, not a warning: a retry that works is routine (`chat -m` prints warnings).
  const onRetry = (retry: RetryNotice) =>
    logger.info(
      `Model request of ${threadId} failed; retry ${retry.attempt} of ${options.maxRetries} in ${(retry.waitMs / 1000).toFixed(1)} s`,
      {
        ...(retry.status !== undefined ? { status: retry.status } : {}),
        error: oneLine(retry.error).slice(0, 300),
      },
    );
  // How every model request of this thread is sent (the run's, and compaction summaries').
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
  const events = createEventTranslator({
    run: () => thread.run,
    maxToolRounds: options.maxToolRounds,
    emit,
    countUsage: thread.countUsage,
    persist: () => thread.persist(),
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
    systemPrompt: () => agent.state.systemPrompt || thread.currentSystemPrompt(),
    tools: () => agent.state.tools,
    onSummaryUsage: thread.countUsage,
    onCompacted: (message, firstKept) => {
      const state = agent.state.messages;
      const k = firstKept ? state.lastIndexOf(firstKept) : -1;
      const next = k === -1 ? [message] : [message, ...state.slice(k)];
      agent.state.messages = next;
      try {
        thread.rewrites++;
        store.saveContext(threadId, next);
        thread.persisted = next.length;
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

  const agent: LoopAgent = createLoopAgent({
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
        thread.run.limitReached
          ? syntheticAssistantMessage(m, toolRoundsNote(thread.run.toolRounds))
          : undefined,
      onRequest: events.startThinking,
      idleTimeoutMs,
      onIdle: () => {
        if (!isRunning() || thread.run.abortRequested) return;
        logger.warn(`The model sent nothing for ${idleTimeoutMs / 1000} s on ${threadId}`);
        thread.run.stalled = true;
        agent.abort();
      },
    }),
    sessionId: threadId,
    toolExecution: "sequential",
  });
  return { agent, engine, events };
}
