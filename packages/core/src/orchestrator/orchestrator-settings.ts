import { integerValue } from "../config/setting-parsers.js";
import type { SettingDefinitions, SettingValues } from "../config/settings-schema.js";

/** The orchestrator's settings: run slots, queues, idle unloading, shutdown and backfill. */
export const orchestratorSettings = {
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
  groupBackfillMessages: {
    env: "GUPPY_GROUP_BACKFILL_MESSAGES",
    parse: integerValue(1, 10_000),
    default: 50,
    description:
      "At most this many messages said in a thread since guppy's last run there (group messages not addressed to it) are given to its next run; the oldest are dropped first",
  },
} satisfies SettingDefinitions;

export type OrchestratorSettingValues = SettingValues<typeof orchestratorSettings>;
