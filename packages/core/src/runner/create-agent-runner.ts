import { emptyTotals } from "../context/usage-totals.js";
import { lastUsage } from "./agent-events.js";
import { AgentThread } from "./agent-thread.js";
import { assembleAgent } from "./assemble-agent.js";
import { runPrompt } from "./run-prompt.js";
import type { AgentRunner, AgentRunnerOptions } from "./types.js";

export type { AgentRunnerOptions } from "./types.js";

/**
 * A thread's runner: its saved context loaded into an agent loop, prompts run one at a time,
 * steered and aborted while they run, and the context reset or compacted between runs.
 */
export function createAgentRunner(options: AgentRunnerOptions): AgentRunner {
  const { threadId, model } = options;
  const loaded = options.store.loadContext(threadId);
  const thread = new AgentThread(options, loaded);
  // `running` is a data property the runner sets itself: an object literal with a getter is a
  // dictionary-mode object in V8 (~800 B more here, and slower lookups), one per thread.
  const runner: Omit<AgentRunner, "running"> & { running: boolean } = {
    threadId,
    model,
    running: false,

    prompt: (input) => runPrompt(thread, runner, input),

    abort() {
      if (runner.running) {
        thread.run.abortRequested = true;
        thread.compacting?.abort();
        thread.agent.abort();
        thread.agent.clearAllQueues();
      }
    },

    steer(text) {
      if (!runner.running) return false;
      const now = new Date();
      thread.agent.steer({
        role: "user",
        content: thread.stamped(text, now),
        timestamp: now.getTime(),
      });
      // Steering a heartbeat makes it a conversation: shown as it goes, kept, never dropped quiet.
      thread.quiet.steer();
      return true;
    },

    subscribe(listener) {
      thread.listeners.add(listener);
      return () => thread.listeners.delete(listener);
    },

    messages: () => thread.agent.state.messages,

    reset() {
      if (runner.running) throw new Error("Cannot start a new conversation while a run is active.");
      const archived = options.store.archiveContext(threadId);
      thread.agent.state.messages = [];
      thread.persisted = 0;
      thread.totals = emptyTotals();
      thread.engine.reset();
      return archived;
    },

    async compact() {
      if (runner.running) throw new Error("Cannot compact while a run is active.");
      runner.running = true;
      thread.run.abortRequested = false;
      try {
        return await thread.compactOutsideLoop("manual");
      } finally {
        runner.running = false;
      }
    },

    stats: () => ({
      messages: thread.agent.state.messages.length,
      lastUsage: lastUsage(thread.agent.state.messages),
      totals: thread.totals,
      running: runner.running,
      context: thread.engine.stats(thread.agent.state.messages),
    }),
  };
  const { agent, engine, events } = assembleAgent(thread, loaded, () => runner.running);
  thread.agent = agent;
  thread.engine = engine;
  thread.events = events;
  return runner;
}
