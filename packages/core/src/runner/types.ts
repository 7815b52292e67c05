import type { AgentMessage, AgentTool, StreamFn } from "@mariozechner/pi-agent-core";
import type { Api, Model, Usage } from "@mariozechner/pi-ai";
import type { Logger } from "../logging/logger.js";
import type { Redactor } from "../logging/redact.js";
import type { Store } from "../store/create-store.js";
import type { Role } from "../types.js";
import type { ApiKeySource } from "./create-stream-fn.js";

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
