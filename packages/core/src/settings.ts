import type { LoadConfigOptions, LoadedConfig } from "./config/load-config.js";
import { readConfig } from "./config/load-config.js";
import type {
  SettingDefinition,
  SettingDefinitions,
  SettingValues,
} from "./config/settings-schema.js";
import { contextSettings } from "./context/compaction.js";
import { heartbeatSettings } from "./heartbeat/active-hours.js";
import { loggingSettings } from "./logging/logger.js";
import { mcpSettings } from "./mcp/mcp-settings.js";
import { modelSettings } from "./model/model-settings.js";
import { orchestratorSettings } from "./orchestrator/orchestrator-settings.js";
import { runnerSettings } from "./runner/runner-settings.js";
import { sandboxSettings } from "./sandbox/resolve-sandbox.js";
import { skillSettings } from "./skills/load-skills.js";
import { subagentSettings } from "./subagents/create-subagents.js";
import { timeSettings } from "./time/local-time.js";
import { toolSettings } from "./tools/tool-policy.js";
import { webSettings } from "./web/web-settings.js";

// Core's settings: each folder exports the table of the settings it reads, and this module puts
// them together — the one table `guppy config`, the flags and docs/configuration.md follow.

const tables = [
  modelSettings,
  runnerSettings,
  toolSettings,
  loggingSettings,
  timeSettings,
  contextSettings,
  skillSettings,
  orchestratorSettings,
  subagentSettings,
  sandboxSettings,
  heartbeatSettings,
  webSettings,
  mcpSettings,
] as const;

/** The tables' rows as one type: the intersection of their types. */
type AllOf<T> = (T extends unknown ? (x: T) => void : never) extends (x: infer I) => void
  ? I
  : never;
type CoreSettings = AllOf<(typeof tables)[number]>;

/** The order `guppy config` and the docs list core's settings in; one not named here comes last. */
const shownOrder: ReadonlyArray<keyof CoreSettings> = [
  "model",
  "baseUrl",
  "api",
  "apiKey",
  "maxTokens",
  "contextWindow",
  "maxToolRounds",
  "toolResultMaxChars",
  "bashTimeoutSeconds",
  "maxRetries",
  "maxRetryWaitSeconds",
  "maxAnswerChars",
  "streamIdleTimeoutSeconds",
  "debug",
  "timezone",
  "compactReserveTokens",
  "compactKeepRecentTokens",
  "skillsInline",
  "maxConcurrent",
  "maxSubagents",
  "queueDepth",
  "idleTimeoutSeconds",
  "shutdownGraceSeconds",
  "tools",
  "sandbox",
  "sandboxMounts",
  "sandboxNetwork",
  "heartbeatSeconds",
  "heartbeatHours",
  "temperature",
  "groupBackfillMessages",
  "braveApiKey",
  "braveBaseUrl",
  "searxngUrl",
  "fetchAllowPrivate",
  "fetchAllowHosts",
  "mcpServers",
  "mcpStartSeconds",
  "mcpTimeoutSeconds",
  "modelCost",
];

/** The folders' tables as one, in shownOrder; a key in two tables is a programming error. */
function compose(all: readonly SettingDefinitions[], order: readonly string[]): SettingDefinitions {
  const rows: SettingDefinitions = {};
  for (const table of all) {
    for (const [key, def] of Object.entries(table)) {
      if (key in rows) throw new Error(`The setting ${key} is in two folders' tables`);
      rows[key] = def;
    }
  }
  const keys = [
    ...order.filter((key) => key in rows),
    ...Object.keys(rows).filter((key) => !order.includes(key)),
  ];
  const ordered: SettingDefinitions = {};
  for (const key of keys) ordered[key] = rows[key] as SettingDefinition;
  return ordered;
}

/** Core's settings: the configuration reference (docs/configuration.md) mirrors them. */
export const settingsSchema = compose(tables, shownOrder as readonly string[]) as Record<
  keyof CoreSettings,
  SettingDefinition
>;

/** Every runtime value, after precedence and validation (an app adds its own: LoadConfigOptions.settings). */
export type ConfigValues = SettingValues<CoreSettings>;

/** A configuration: where it came from and core's values. */
export type GuppyConfig = LoadedConfig & ConfigValues;

/** A configuration with the values of an app's own settings. */
export type ConfigWith<S extends SettingDefinitions> = GuppyConfig & SettingValues<S>;

/** Core's settings and an app's as one table, core's first; a key or variable is read once. */
export function withAppSettings(app: SettingDefinitions = {}): SettingDefinitions {
  const envs = new Set(Object.values(settingsSchema).map((def) => def.env));
  for (const [key, def] of Object.entries(app)) {
    if (key in settingsSchema || (def.env && envs.has(def.env))) {
      throw new Error(`The setting ${key} (${def.env}) is one of core's or the app's already`);
    }
    envs.add(def.env);
  }
  return { ...settingsSchema, ...app };
}

/**
 * Core's settings and the app's (`options.settings`), read with flags > environment >
 * <home>/guppy.env > <home>/settings.json > defaults. Throws ConfigError.
 */
// biome-ignore lint/complexity/noBannedTypes: no settings beyond core's
export function loadConfig<S extends SettingDefinitions = {}>(
  options: LoadConfigOptions<S> = {},
): ConfigWith<S> {
  return readConfig(withAppSettings(options.settings), options) as ConfigWith<S>;
}
