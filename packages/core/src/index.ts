// What an embedder uses: load the configuration, open a store, resolve a model, run threads
// through an orchestrator. The rest of what an app needs comes through the subpath exports
// (package.json "exports": ./config, ./context, ./events, ./fs, ./memory, ./prompt, ./runner, ./sandbox,
// ./skills, ./thread-layout).
export { ConfigError, isConfigError } from "./config/config-error.js";
export type {
  ConfigSource,
  LoadConfigOptions,
  LoadedConfig,
} from "./config/load-config.js";
export type * from "./context/types.js";
export {
  createEventBus,
  type EventBus,
  type EventBusOptions,
  type EventBusReport,
} from "./events/create-event-bus.js";
export { createScheduleTool, type ScheduleToolOptions } from "./events/schedule-tool.js";
export { parseActiveHours } from "./heartbeat/active-hours.js";
export { type BeatOutcome, createHeartbeat, type Heartbeat } from "./heartbeat/create-heartbeat.js";
export {
  createLastChannel,
  type HeartbeatAdapters,
  type LastChannel,
  recordLastChannel,
} from "./heartbeat/last-channel.js";
export {
  createLineLogger,
  type Logger,
  type LogLevel,
  routeConsoleTo,
  silentLogger,
} from "./logging/logger.js";
export {
  createRedactor,
  type Redactor,
  redactLogger,
  type Secret,
  type TextStream,
} from "./logging/redact.js";
export { createMcpManager, type McpManager } from "./mcp/create-mcp-manager.js";
export type { McpServerStatus } from "./mcp/types.js";
export {
  AUTH_FILE,
  authFilePath,
  readAuthFile,
  signedInProviders,
  storedOAuth,
  withAuthLock,
  writeAuthEntry,
} from "./model/auth-file.js";
export type { OAuthSession } from "./model/oauth-key.js";
export {
  type DiscoveredModel,
  discoverLocalModel,
  envKeyName,
  listServerModels,
  localServers,
  type ResolvedModel,
  resolveModel,
} from "./model/resolve-model.js";
export {
  type ConcurrencyLimiter,
  createConcurrencyLimiter,
} from "./orchestrator/concurrency-limiter.js";
export {
  createOrchestrator,
  type OrchestratorOptions,
  ThreadHeldError,
} from "./orchestrator/create-orchestrator.js";
export { RESTART_NOTICE } from "./orchestrator/shutdown.js";
export type * from "./orchestrator/types.js";
export { type AgentRunnerOptions, createAgentRunner } from "./runner/create-agent-runner.js";
export { createThreadRunner, type ThreadRunnerOptions } from "./runner/create-thread-runner.js";
export type * from "./runner/types.js";
export { configuredSecrets } from "./sandbox/host-sandbox.js";
export { createSandbox, type Sandbox, type SandboxConfig } from "./sandbox/sandbox.js";
export {
  type ConfigValues,
  type ConfigWith,
  type GuppyConfig,
  loadConfig,
  settingsSchema,
  withAppSettings,
} from "./settings.js";
export { createStore, type Store } from "./store/create-store.js";
export {
  createSubagents,
  type Subagents,
  type SubagentsOptions,
} from "./subagents/create-subagents.js";
export {
  createCoreTools,
  type ExtraToolSource,
  type ServiceToolName,
  type ServiceTools,
} from "./tools/create-tools.js";
export {
  createSearchChannelTool,
  type SearchChannelToolOptions,
} from "./tools/search-channel-tool.js";
export type { ToolContext } from "./tools/tool-context.js";
export type * from "./types.js";
