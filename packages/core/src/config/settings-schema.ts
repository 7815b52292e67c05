import { MAX_BASH_TIMEOUT_SECONDS } from "../tools/bash-timeout.js";
import {
  booleanValue,
  hostValue,
  integerValue,
  listValue,
  modelRefValue,
  oneOf,
  type Parser,
  stringValue,
  timezoneValue,
  tokenValue,
  urlValue,
} from "./setting-parsers.js";

/** The smallest GUPPY_CONTEXT_WINDOW: room for guppy's system prompt, tools and a short turn. */
export const MIN_CONTEXT_WINDOW = 4096;

/** Wire protocols a custom endpoint (GUPPY_BASE_URL) can speak. */
export const wireApis = ["openai-completions", "anthropic-messages", "openai-responses"] as const;
export type WireApi = (typeof wireApis)[number];

/** Access policies a chat channel can have (issue: channels). */
export const accessPolicies = ["pairing", "allowlist", "open", "disabled"] as const;
export type AccessPolicy = (typeof accessPolicies)[number];

/** When guppy answers in group chats: only when mentioned or replied to, or to every message. */
export const groupReplyModes = ["mention", "all"] as const;
export type GroupReplies = (typeof groupReplyModes)[number];

/** Every configurable value, after precedence and validation. */
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
  streamIdleTimeoutSeconds: number;
  debug: boolean;
  timezone?: string;
  compactReserveTokens: number;
  compactKeepRecentTokens: number;
  skillsInline: boolean;
  maxConcurrent: number;
  queueDepth: number;
  idleTimeoutSeconds: number;
  shutdownGraceSeconds: number;
  httpHost: string;
  httpPort: number;
  apiToken?: string;
  telegramBotToken?: string;
  telegramApiUrl?: string;
  slackBotToken?: string;
  slackAppToken?: string;
  discordBotToken?: string;
  accessPolicy: AccessPolicy;
  allowedUsers: string[];
  telegramAccessPolicy?: AccessPolicy;
  slackAccessPolicy?: AccessPolicy;
  discordAccessPolicy?: AccessPolicy;
  groupReplies: GroupReplies;
  discordApplicationId?: string;
  discordPublicKey?: string;
}

export type ConfigKey = keyof ConfigValues;

export interface SettingDefinition<K extends ConfigKey> {
  /** Environment variable read for this key. */
  env: string;
  parse: Parser<NonNullable<ConfigValues[K]>>;
  default?: ConfigValues[K];
  /** Masked by `guppy config`. */
  secret?: boolean;
  description: string;
}

export type SettingsSchema = { [K in ConfigKey]-?: SettingDefinition<K> };

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
    description: "Retries on 429/5xx/network errors, with backoff honouring retry-after",
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
  httpHost: {
    env: "GUPPY_HTTP_HOST",
    parse: hostValue,
    default: "127.0.0.1",
    description: "Address the HTTP API binds",
  },
  httpPort: {
    env: "GUPPY_HTTP_PORT",
    parse: integerValue(0, 65_535),
    default: 7420,
    description: "Port of the HTTP API",
  },
  apiToken: {
    env: "GUPPY_API_TOKEN",
    parse: stringValue,
    secret: true,
    description:
      "Bearer token for the HTTP API: at least 16 characters of visible ASCII (generated into <home>/api-token on first start when unset)",
  },
  telegramBotToken: {
    env: "TELEGRAM_BOT_TOKEN",
    parse: tokenValue,
    secret: true,
    description: "Telegram bot token (enables the Telegram channel)",
  },
  telegramApiUrl: {
    env: "GUPPY_TELEGRAM_API_URL",
    parse: urlValue,
    description: "Telegram Bot API root (self-hosted Bot API server or an emulator)",
  },
  slackBotToken: {
    env: "SLACK_BOT_TOKEN",
    parse: tokenValue,
    secret: true,
    description: "Slack bot token (xoxb-...)",
  },
  slackAppToken: {
    env: "SLACK_APP_TOKEN",
    parse: tokenValue,
    secret: true,
    description: "Slack app-level token for Socket Mode (xapp-...)",
  },
  discordBotToken: {
    env: "DISCORD_BOT_TOKEN",
    parse: tokenValue,
    secret: true,
    description: "Discord bot token",
  },
  accessPolicy: {
    env: "GUPPY_ACCESS_POLICY",
    parse: oneOf(accessPolicies),
    default: "pairing",
    description: "Who may talk to guppy on chat channels",
  },
  allowedUsers: {
    env: "GUPPY_ALLOWED_USERS",
    parse: listValue(),
    default: [],
    description: "User ids admitted by the allowlist policy (comma-separated)",
  },
  telegramAccessPolicy: {
    env: "GUPPY_TELEGRAM_ACCESS_POLICY",
    parse: oneOf(accessPolicies),
    description: "Access policy of the Telegram channel (default: GUPPY_ACCESS_POLICY)",
  },
  slackAccessPolicy: {
    env: "GUPPY_SLACK_ACCESS_POLICY",
    parse: oneOf(accessPolicies),
    description: "Access policy of the Slack channel (default: GUPPY_ACCESS_POLICY)",
  },
  discordAccessPolicy: {
    env: "GUPPY_DISCORD_ACCESS_POLICY",
    parse: oneOf(accessPolicies),
    description: "Access policy of the Discord channel (default: GUPPY_ACCESS_POLICY)",
  },
  groupReplies: {
    env: "GUPPY_GROUP_REPLIES",
    parse: oneOf(groupReplyModes),
    default: "mention",
    description:
      "In group chats answer only when mentioned or replied to (mention), or always (all)",
  },
  discordApplicationId: {
    env: "DISCORD_APPLICATION_ID",
    parse: stringValue,
    description: "Discord application id (Developer Portal, General Information)",
  },
  discordPublicKey: {
    env: "DISCORD_PUBLIC_KEY",
    parse: stringValue,
    description: "Discord application public key (Developer Portal, General Information)",
  },
};

export const configKeys = Object.keys(settingsSchema) as ConfigKey[];
