import { ACTIVE_HOURS_EXPECTED, parseActiveHours } from "../heartbeat/active-hours.js";
import { type McpServers, mcpServersValue } from "../mcp/mcp-settings.js";
import { MAX_BASH_TIMEOUT_SECONDS } from "../tools/bash-timeout.js";
import { type ToolPolicySettings, toolPolicyValue } from "../tools/tool-policy.js";
import {
  booleanValue,
  integerValue,
  isObject,
  listValue,
  modelRefValue,
  numberValue,
  oneOf,
  type ParseResult,
  type Parser,
  timezoneValue,
  tokenValue,
  urlValue,
} from "./setting-parsers.js";

/**
 * The smallest GUPPY_CONTEXT_WINDOW: room for guppy's system prompt, its tools (~1,100 tokens with
 * the schedule, messaging and subagent tools) and a short turn beside a reply of half the window.
 */
export const MIN_CONTEXT_WINDOW = 6144;

/** Wire protocols a custom endpoint (GUPPY_BASE_URL) can speak. */
export const wireApis = ["openai-completions", "anthropic-messages", "openai-responses"] as const;
export type WireApi = (typeof wireApis)[number];

/** Every runtime value, after precedence and validation (an app adds its own: LoadConfigOptions.settings). */
export interface ConfigValues {
  model?: string;
  baseUrl?: string;
  api?: WireApi;
  apiKey?: string;
  maxTokens?: number;
  contextWindow?: number;
  maxToolRounds: number;
  toolResultMaxChars: number;
  bashTimeoutSeconds: number;
  maxRetries: number;
  maxRetryWaitSeconds: number;
  maxAnswerChars: number;
  streamIdleTimeoutSeconds: number;
  debug: boolean;
  timezone?: string;
  compactReserveTokens: number;
  compactKeepRecentTokens: number;
  skillsInline: boolean;
  maxConcurrent: number;
  maxSubagents: number;
  queueDepth: number;
  idleTimeoutSeconds: number;
  shutdownGraceSeconds: number;
  tools?: ToolPolicySettings;
  sandbox: string;
  sandboxMounts?: string[];
  sandboxNetwork: "on" | "off";
  heartbeatSeconds: number;
  heartbeatHours?: string;
  temperature?: number;
  groupBackfillMessages: number;
  braveApiKey?: string;
  braveBaseUrl: string;
  searxngUrl?: string;
  fetchAllowPrivate: boolean;
  fetchAllowHosts?: string[];
  mcpServers?: McpServers;
  mcpStartSeconds: number;
  mcpTimeoutSeconds: number;
  modelCost?: ModelCost;
}

/** Prices of a model in dollars per million tokens (settings.json `modelCost`). */
export interface ModelCost {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

export type ConfigKey = keyof ConfigValues;

/** One setting: its settings.json key (and flag, in kebab case) is the key it has in its table. */
export interface SettingDefinition<T = unknown> {
  /**
   * Environment variable read for this key (its flag is the key in kebab case). Absent: the
   * setting is read from settings.json only, where its value may be any JSON (an object of
   * lists, say), which no variable or flag could spell readably.
   */
  env?: string;
  parse: Parser<T>;
  default?: T;
  /** Masked by `guppy config`, never shown in an error, withheld from tool commands. */
  secret?: boolean;
  description: string;
}

/** A table of settings by key, such as core's schema or the settings an app adds to it. */
// biome-ignore lint/suspicious/noExplicitAny: a table holds settings of every value type
export type SettingDefinitions = Record<string, SettingDefinition<any>>;

type ValueOf<D> = D extends { parse: Parser<infer T> } ? T : never;

/** The values a table of settings gives: a setting with a default always has one. */
export type SettingValues<S extends SettingDefinitions> = {
  -readonly [K in keyof S as S[K] extends { default: unknown } ? K : never]: ValueOf<S[K]>;
} & {
  -readonly [K in keyof S as S[K] extends { default: unknown } ? never : K]?: ValueOf<S[K]>;
};

export type SettingsSchema = {
  [K in ConfigKey]-?: SettingDefinition<NonNullable<ConfigValues[K]>>;
};

/** The one table of settings: the configuration reference (docs/configuration.md) mirrors it. */
export const settingsSchema: SettingsSchema = {
  model: {
    env: "GUPPY_MODEL",
    parse: modelRefValue,
    description: "Model as provider/model-id (pi-ai catalog), e.g. anthropic/claude-sonnet-4-5",
  },
  baseUrl: {
    env: "GUPPY_BASE_URL",
    parse: urlValue,
    description: "Custom endpoint base URL (Ollama, LM Studio, vLLM, a proxy)",
  },
  api: {
    env: "GUPPY_API",
    parse: oneOf(wireApis),
    description: "Wire protocol of the custom endpoint",
  },
  apiKey: {
    env: "GUPPY_API_KEY",
    parse: tokenValue,
    secret: true,
    description: "API key; overrides the provider's own variable (ANTHROPIC_API_KEY, ...)",
  },
  maxTokens: {
    env: "GUPPY_MAX_TOKENS",
    parse: integerValue(1),
    description:
      "Tokens reserved for each reply, at most half the context window (default: the model catalog's limit, capped)",
  },
  contextWindow: {
    env: "GUPPY_CONTEXT_WINDOW",
    // guppy's system prompt and tools take ~1,000 tokens; with the reply at most half the window
    // and the 256-token safety margin, 4096 leaves a request ≥ 1,792 tokens — 1024 left none.
    parse: integerValue(MIN_CONTEXT_WINDOW),
    description: `Context window in tokens, at least ${MIN_CONTEXT_WINDOW} (default: the model catalog's)`,
  },
  maxToolRounds: {
    env: "GUPPY_MAX_TOOL_ROUNDS",
    parse: integerValue(1, 1000),
    default: 25,
    description: "Tool rounds per run before the run stops",
  },
  toolResultMaxChars: {
    env: "GUPPY_TOOL_RESULT_MAX_CHARS",
    parse: integerValue(200),
    default: 10_000,
    description: "Longest tool output kept in context; the rest is saved to a file",
  },
  bashTimeoutSeconds: {
    env: "GUPPY_BASH_TIMEOUT_SECONDS",
    parse: integerValue(1, MAX_BASH_TIMEOUT_SECONDS),
    default: 120,
    description: `Default timeout of a bash tool call; the model may set its own per call, up to ${MAX_BASH_TIMEOUT_SECONDS} (24 h)`,
  },
  maxRetries: {
    env: "GUPPY_MAX_RETRIES",
    parse: integerValue(0, 10),
    default: 3,
    description: "Retries on 408/409/429/5xx/network errors, with backoff honouring retry-after",
  },
  maxRetryWaitSeconds: {
    env: "GUPPY_MAX_RETRY_WAIT_SECONDS",
    parse: integerValue(0, 3600),
    default: 60,
    description:
      "Longest wait before a retry: a provider asking (retry-after) for longer fails the request at once",
  },
  maxAnswerChars: {
    env: "GUPPY_MAX_ANSWER_CHARS",
    parse: integerValue(1000, 100_000_000),
    default: 200_000,
    description:
      "An answer longer than this (text, thinking and tool-call arguments) is cut there and ends with a note",
  },
  streamIdleTimeoutSeconds: {
    env: "GUPPY_STREAM_IDLE_TIMEOUT_SECONDS",
    parse: integerValue(0, 86_400),
    default: 300,
    description: "A model answer that sends nothing this long is stopped as failed (0: never)",
  },
  debug: {
    env: "GUPPY_DEBUG",
    parse: booleanValue,
    default: false,
    description: "Verbose logging to stderr",
  },
  timezone: {
    env: "GUPPY_TIMEZONE",
    parse: timezoneValue,
    description: "Time zone for dates and daily notes (default: the system's)",
  },
  compactReserveTokens: {
    env: "GUPPY_COMPACT_RESERVE_TOKENS",
    parse: integerValue(0),
    default: 16_384,
    description: "Compaction starts when context passes window minus this many tokens",
  },
  compactKeepRecentTokens: {
    env: "GUPPY_COMPACT_KEEP_TOKENS",
    parse: integerValue(0),
    default: 20_000,
    description: "Most recent tokens kept verbatim by a compaction",
  },
  skillsInline: {
    env: "GUPPY_SKILLS_INLINE",
    parse: booleanValue,
    default: false,
    description: "Put whole SKILL.md bodies in the system prompt instead of a listing",
  },
  maxConcurrent: {
    env: "GUPPY_MAX_CONCURRENT",
    parse: integerValue(1, 10_000),
    default: 8,
    description: "Agents running at once across all threads",
  },
  maxSubagents: {
    env: "GUPPY_MAX_SUBAGENTS",
    parse: integerValue(1, 64),
    default: 4,
    description: "Subagents (spawn, subagent tools) running at once per thread",
  },
  queueDepth: {
    env: "GUPPY_QUEUE_DEPTH",
    parse: integerValue(1, 1000),
    default: 5,
    description: "Prompts that may wait per thread (accepted, not running yet)",
  },
  idleTimeoutSeconds: {
    env: "GUPPY_IDLE_TIMEOUT_SECONDS",
    parse: integerValue(1),
    default: 300,
    description: "Idle time after which a thread's agent is unloaded",
  },
  shutdownGraceSeconds: {
    env: "GUPPY_SHUTDOWN_GRACE_SECONDS",
    parse: integerValue(0, 3600),
    default: 30,
    description:
      "How long `guppy serve` lets running turns finish on Ctrl+C (SIGINT), SIGTERM or SIGHUP",
  },
  tools: {
    parse: toolPolicyValue(),
    description:
      "Tools per channel and role: `allow` replaces the role's default set, `deny` removes from it (see Tools and roles)",
  },
  sandbox: {
    env: "GUPPY_SANDBOX",
    parse: sandboxValue(),
    default: "auto",
    description:
      "Where tools run: `auto` (bubblewrap when it works here, else the host, said at start), `bwrap`, `docker:<container>` or `host` (unconfined)",
  },
  sandboxMounts: {
    env: "GUPPY_SANDBOX_MOUNTS",
    parse: mountListValue(),
    description:
      "Extra folders bubblewrap shows the tools, comma-separated; each `path`, `path:ro` or `path:rw` (read-only unless `:rw`)",
  },
  sandboxNetwork: {
    env: "GUPPY_SANDBOX_NETWORK",
    parse: oneOf(["on", "off"] as const),
    default: "on",
    description: "Network inside the bubblewrap sandbox: `on` or `off` (loopback only)",
  },
  heartbeatSeconds: {
    env: "GUPPY_HEARTBEAT_SECONDS",
    parse: integerValue(0, 7 * 86_400),
    default: 1800,
    description:
      "Seconds between heartbeats of `guppy serve`, which run `<home>/HEARTBEAT.md` in the owner's last thread when it asks for something (0: off)",
  },
  heartbeatHours: {
    env: "GUPPY_HEARTBEAT_HOURS",
    parse: activeHoursValue(),
    description:
      "Local hours heartbeats run in, HH:MM-HH:MM in GUPPY_TIMEZONE (may span midnight, e.g. 22:00-06:00); beats outside are skipped (default: all day)",
  },
  temperature: {
    env: "GUPPY_TEMPERATURE",
    parse: numberValue(0, 2),
    description:
      "Sampling temperature sent with every request (default: unset, the provider's own)",
  },
  groupBackfillMessages: {
    env: "GUPPY_GROUP_BACKFILL_MESSAGES",
    parse: integerValue(1, 10_000),
    default: 50,
    description:
      "At most this many messages said in a thread since guppy's last run there (group messages not addressed to it) are given to its next run; the oldest are dropped first",
  },
  braveApiKey: {
    env: "BRAVE_API_KEY",
    parse: tokenValue,
    secret: true,
    description:
      "Brave Search API key: offers the `web_search` tool (free tier: 2,000 queries a month)",
  },
  braveBaseUrl: {
    env: "GUPPY_BRAVE_BASE_URL",
    parse: urlValue,
    default: "https://api.search.brave.com",
    description: "Base URL of the Brave Search API (a proxy or a stand-in)",
  },
  searxngUrl: {
    env: "GUPPY_SEARXNG_URL",
    parse: urlValue,
    description:
      "A SearXNG instance (keyless, self-hosted, JSON format enabled) for `web_search`, e.g. http://127.0.0.1:8888",
  },
  fetchAllowPrivate: {
    env: "GUPPY_FETCH_ALLOW_PRIVATE",
    parse: booleanValue,
    default: false,
    description:
      "Let `read_url` fetch loopback, private, link-local and cloud-metadata addresses (refused by default)",
  },
  fetchAllowHosts: {
    env: "GUPPY_FETCH_ALLOW_HOSTS",
    parse: listValue(),
    description:
      "Host names `read_url` may fetch even when they resolve to a private address, comma-separated, as written in the URL",
  },
  mcpServers: {
    parse: mcpServersValue,
    description:
      'MCP servers whose tools the agent gets as `<server>__<tool>`: `{"name": {"command", "args", "env"}}` (stdio, runs as you, outside the sandbox) or `{"name": {"url", "headers"}}` (Streamable HTTP)',
  },
  mcpStartSeconds: {
    env: "GUPPY_MCP_START_SECONDS",
    parse: integerValue(0, 600),
    default: 5,
    description:
      "How long `guppy chat` waits for configured MCP servers before its first request (`guppy serve` never waits)",
  },
  mcpTimeoutSeconds: {
    env: "GUPPY_MCP_TIMEOUT_SECONDS",
    parse: integerValue(1, 86_400),
    default: 60,
    description: "Longest an MCP tool call may take",
  },
  modelCost: {
    parse: modelCostValue(),
    description:
      'Prices of the model in dollars per million tokens, for a custom endpoint or to override the catalog\'s: `{"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}` (cache prices default to 0)',
  },
};

/** settings.json `modelCost`: input and output prices (cache prices optional), each ≥ 0. */
function modelCostValue(): Parser<ModelCost> {
  const expected =
    'an object of prices per million tokens, {"input": N, "output": N, "cacheRead": N, "cacheWrite": N}';
  const parse = (raw: unknown): ParseResult<ModelCost> => {
    if (!isObject(raw)) return { ok: false, expected };
    const fields = ["input", "output", "cacheRead", "cacheWrite"] as const;
    for (const key of Object.keys(raw)) {
      if (!(fields as readonly string[]).includes(key)) {
        return {
          ok: false,
          expected,
          problem: `modelCost: unknown field "${key}" (fields: ${fields.join(", ")})`,
        };
      }
    }
    const cost: ModelCost = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
    for (const field of fields) {
      const v = raw[field];
      if (v === undefined && (field === "cacheRead" || field === "cacheWrite")) continue;
      if (typeof v !== "number" || !Number.isFinite(v) || v < 0) {
        return {
          ok: false,
          expected,
          problem: `modelCost.${field} must be a number ≥ 0 (dollars per million tokens)`,
        };
      }
      cost[field] = v;
    }
    return { ok: true, value: cost };
  };
  return Object.assign(parse, { expected });
}

/** GUPPY_HEARTBEAT_HOURS: `HH:MM-HH:MM`, kept as written (the heartbeat parses it again). */
function activeHoursValue(): Parser<string> {
  const parse = (raw: unknown): ParseResult<string> =>
    typeof raw === "string" && parseActiveHours(raw) !== undefined
      ? { ok: true, value: raw.trim() }
      : { ok: false, expected: ACTIVE_HOURS_EXPECTED };
  return Object.assign(parse, { expected: ACTIVE_HOURS_EXPECTED });
}

/** GUPPY_SANDBOX: `auto`, `bwrap`, `host` or `docker:<container>` (a Docker container name or id). */
function sandboxValue(): Parser<string> {
  const expected = "one of auto, bwrap, docker:<container>, host";
  const parse = (raw: unknown): ParseResult<string> => {
    const value = typeof raw === "string" ? raw.trim() : "";
    if (["auto", "bwrap", "host"].includes(value)) return { ok: true, value };
    if (/^docker:[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(value)) return { ok: true, value };
    return { ok: false, expected };
  };
  return Object.assign(parse, { expected });
}

/** GUPPY_SANDBOX_MOUNTS: absolute paths, each with an optional `:ro` or `:rw`. */
function mountListValue(): Parser<string[]> {
  const list = listValue();
  const expected = "a comma-separated list of absolute paths, each path[:ro|:rw]";
  const parse = (raw: unknown): ParseResult<string[]> => {
    const parsed = list(raw);
    if (!parsed.ok) return { ok: false, expected };
    const ok = parsed.value.every((entry) => entry.replace(/:(ro|rw)$/, "").startsWith("/"));
    return ok ? parsed : { ok: false, expected };
  };
  return Object.assign(parse, { expected, list: true as const });
}

export const configKeys = Object.keys(settingsSchema) as ConfigKey[];

/** The environment variables of the settings marked secret. */
export function secretEnvNames(settings: SettingDefinitions): string[] {
  return Object.values(settings).flatMap((def) => (def.secret && def.env ? [def.env] : []));
}
