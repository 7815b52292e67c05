import type { AgentMessage } from "@mariozechner/pi-agent-core";
import type { Usage } from "@mariozechner/pi-ai";
import { isCompactionMessage } from "../context/compaction-message.js";
import type { ContextEngine } from "../context/create-context-engine.js";
import type { CompactionOutcome } from "../context/types.js";
import { addUsage, emptyTotals } from "../context/usage-totals.js";
import { type Logger, silentLogger } from "../logging/logger.js";
import { createRedactor, type Redactor } from "../logging/redact.js";
import type { DeliveredWatch } from "../messaging/delivered-answer.js";
import type { Store } from "../store/create-store.js";
import type { RunnerEvent, UsageTotals } from "../types.js";
import {
  type createEventTranslator,
  newRunState,
  type RunState,
  redactEvents,
} from "./agent-events.js";
import type { LoopAgent } from "./loop-agent.js";
import { isAssistant } from "./message-text.js";
import { createQuietRunGate, type QuietRunGate } from "./quiet-run.js";
import type { AgentRunnerOptions, RunnerEventListener } from "./types.js";

export type EventTranslator = ReturnType<typeof createEventTranslator>;

/** What `assembleAgent` builds for a thread: set on its `AgentThread` right after. */
export interface ThreadAgent {
  agent: LoopAgent;
  engine: ContextEngine;
  events: EventTranslator;
}

/**
 * One thread's runner state: its agent and context engine, how much of the context is saved,
 * the usage totals, the current run and who listens. The run's steps (`runPrompt`) and the
 * agent's assembly (`assembleAgent`) are plain functions over it.
 */
export class AgentThread {
  readonly options: AgentRunnerOptions;
  readonly threadId: string;
  readonly store: Store;
  readonly logger: Logger;
  readonly redactor: Redactor;
  /** GUPPY_STREAM_IDLE_TIMEOUT_SECONDS in ms (0: never). */
  readonly idleTimeoutMs: number;
  readonly listeners = new Set<RunnerEventListener>();
  /** The running prompt's own listener (`PromptInput.onEvent`). */
  runListener: RunnerEventListener | undefined;
  /** A heartbeat run's events and messages, held until it is known to say something. */
  readonly quiet: QuietRunGate;
  /** What this run's send_message calls posted to its own thread (no answer posted twice). */
  sent: DeliveredWatch | undefined;
  /** Counts whole rewrites of context.jsonl (compactions): a quiet run then rewrites it again. */
  rewrites = 0;
  run: RunState = newRunState();
  /** How many of the agent's messages context.jsonl holds. */
  persisted: number;
  /** Aborts a compaction made outside the agent loop (/compact, overflow recovery). */
  compacting: AbortController | undefined;
  totals: UsageTotals;
  agent!: LoopAgent;
  engine!: ContextEngine;
  events!: EventTranslator;

  /** `loaded`: the thread's saved context, as read at activation. */
  constructor(options: AgentRunnerOptions, loaded: AgentMessage[]) {
    this.options = options;
    this.threadId = options.threadId;
    this.store = options.store;
    this.logger = options.logger ?? silentLogger;
    this.redactor = options.redactor ?? createRedactor([]);
    const emitNow = redactEvents(this.redactor, (event: RunnerEvent) => {
      if (this.runListener) this.call(this.runListener, event);
      for (const listener of this.listeners) this.call(listener, event);
    });
    this.quiet = createQuietRunGate(emitNow);
    this.persisted = loaded.length;
    this.idleTimeoutMs = (options.streamIdleTimeoutSeconds ?? 0) * 1000;
    this.totals = loaded.reduce(
      (acc, m) => (isAssistant(m) && m.usage ? addUsage(acc, m.usage) : acc),
      // A compacted context carries the usage of what it no longer holds.
      (isCompactionMessage(loaded[0]) ? loaded[0].usageCarried : undefined) ?? emptyTotals(),
    );
  }

  private call(listener: RunnerEventListener, event: RunnerEvent): void {
    try {
      listener(event);
    } catch (error) {
      this.logger.warn("A runner event listener threw", { error: String(error) });
    }
  }

  readonly emit = (event: RunnerEvent): void => {
    this.sent?.see(event);
    this.quiet.emit(event);
  };

  /** A request's usage: the ledger's hook, the thread's and the run's totals, then the event. */
  readonly countUsage = (usage: Usage): void => {
    this.options.onUsage?.(usage);
    this.totals = addUsage(this.totals, usage);
    this.run.usage = addUsage(this.run.usage, usage);
    this.emit({ type: "usage", usage, totals: this.totals });
  };

  /** Appends the agent's new messages to context.jsonl (not while a quiet run is held). */
  readonly persist = (): void => {
    if (this.quiet.holding) return;
    const messages = this.agent.state.messages;
    if (messages.length > this.persisted) {
      try {
        this.store.appendContext(this.threadId, messages.slice(this.persisted));
        this.persisted = messages.length;
      } catch (error) {
        this.logger.error(`Could not save the context of ${this.threadId}`, {
          error: String(error),
        });
      }
    }
  };

  async compactOutsideLoop(reason: "manual" | "overflow"): Promise<CompactionOutcome> {
    this.compacting = new AbortController();
    try {
      return await this.engine.compact(this.agent.state.messages, reason, this.compacting.signal);
    } finally {
      this.compacting = undefined;
    }
  }

  /**
   * Takes the current run's messages out of the context. Nothing of it was appended to
   * context.jsonl; a compaction during it rewrote the file with them, so it is rewritten again.
   */
  dropRun(rewritten: boolean): void {
    const own = new Set(this.run.messages);
    const kept = this.agent.state.messages.filter((m) => !own.has(m));
    this.agent.state.messages = kept;
    if (rewritten) {
      try {
        this.store.saveContext(this.threadId, kept);
      } catch (error) {
        this.logger.error(`Could not save the context of ${this.threadId}`, {
          error: String(error),
        });
      }
    }
    this.persisted = kept.length;
  }

  /** `text` as the context stores it: after the local time it was sent at, when stamping is on. */
  stamped(text: string, now: Date): string {
    return this.options.timeStamp ? `${this.options.timeStamp(now)} ${text}` : text;
  }

  currentSystemPrompt(): string {
    return typeof this.options.systemPrompt === "function"
      ? this.options.systemPrompt(this.agent.state.tools)
      : this.options.systemPrompt;
  }

  safeLog(write: () => void): void {
    try {
      write();
    } catch (error) {
      this.logger.error(`Could not write the log of ${this.threadId}`, { error: String(error) });
    }
  }
}
