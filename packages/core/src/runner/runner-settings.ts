import { integerValue } from "../config/setting-parsers.js";
import type { SettingDefinitions, SettingValues } from "../config/settings-schema.js";

/** A run's settings: its tool rounds, its retries, the longest answer and the idle stream's limit. */
export const runnerSettings = {
  maxToolRounds: {
    env: "GUPPY_MAX_TOOL_ROUNDS",
    parse: integerValue(1, 1000),
    default: 25,
    description: "Tool rounds per run before the run stops",
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
} satisfies SettingDefinitions;

export type RunnerSettingValues = SettingValues<typeof runnerSettings>;
