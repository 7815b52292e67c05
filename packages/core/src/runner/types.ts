// The runner's own types: a thread's agent as the orchestrator drives it, and how one is made.
import type { AgentMessage, AgentTool, StreamFn } from "@mariozechner/pi-agent-core";
import type { Api, ImageContent, Model, Usage } from "@mariozechner/pi-ai";
import type { CompactionOutcome } from "../context/types.js";
import type { Logger } from "../logging/logger.js";
import type { Redactor } from "../logging/redact.js";
import type { Store } from "../store/create-store.js";
import type {
  PromptOrigin,
  Role,
  RunnerEvent,
  RunnerStats,
  RunStopReason,
  UsageTotals,
} from "../types.js";
import type { ApiKeySource } from "./create-stream-fn.js";

export type RunnerEventListener = (event: RunnerEvent) => void;

export interface PromptInput {
  text: string;
  images?: ImageContent[];
  /** Who sent it, for log.jsonl. */
  messageId?: string;
  userId?: string;
  userName?: string;
  /** The sender's role (default: owner): the run gets that role's tool set. */
  role?: Role;
  /** Set when guppy itself sent it (PromptSender.origin): a heartbeat's quiet answer is not kept. */
  origin?: PromptOrigin;
  /** Its line is in log.jsonl already (a prompt run again after the process died mid-run). */
  logged?: boolean;
  /** This run's events, before the subscribers get them (no subscribe/unsubscribe per run). */
  onEvent?: RunnerEventListener;
}

export interface RunResult {
  text: string;
  stopReason: RunStopReason;
  errorMessage?: string;
  /** Usage of this run's requests. */
  usage: UsageTotals;
}

/** One thread's agent: its context, tool loop and figures. */
export interface AgentRunner {
  readonly threadId: string;
  readonly model: Model<Api>;
  readonly running: boolean;
  /** One user message → the full tool loop → the final text. Never throws for provider errors. */
  prompt(input: PromptInput): Promise<RunResult>;
  /** Stops the LLM stream and kills running tools; the partial answer is kept. */
  abort(): void;
  /**
   * Injects a message into the running agent, taken after the running tool call (the batch's calls
   * not started yet are skipped). False if idle.
   */
  steer(text: string): boolean;
  subscribe(listener: RunnerEventListener): () => void;
  messages(): readonly AgentMessage[];
  /** Archives the context and starts fresh (/new). */
  reset(): string | undefined;
  /** Compacts the context now (/compact): summary of the older part, or the drop fallback. */
  compact(): Promise<CompactionOutcome>;
  stats(): RunnerStats;
}

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
