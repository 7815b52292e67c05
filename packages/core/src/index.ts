export { excerptHeadTail, spillOutput } from "./artifacts/spill-output.js";
export { ConfigError, isConfigError } from "./config/config-error.js";
export {
  type ConfigSource,
  describeConfig,
  type GuppyConfig,
  kebab,
  type LoadConfigOptions,
  loadConfig,
  maskSecret,
  resolveHome,
} from "./config/load-config.js";
export {
  type AccessPolicy,
  type ConfigKey,
  type ConfigValues,
  configKeys,
  type GroupReplies,
  type SettingDefinition,
  settingsSchema,
  type WireApi,
  wireApis,
} from "./config/settings-schema.js";
export {
  createInbox,
  INBOX_FILE,
  type Inbox,
} from "./inbox/create-inbox.js";
export type { InboxOutcome, InboxRecord, PendingPrompt } from "./inbox/inbox-record.js";
export { createLineLogger, type Logger, type LogLevel, silentLogger } from "./logging/logger.js";
export { type DiscoveredModel, discoverLocalModel, localServers } from "./model/local-servers.js";
export {
  DEFAULT_CUSTOM_CONTEXT_WINDOW,
  envKeyName,
  noModelMessage,
  type ResolvedModel,
  resolveModel,
} from "./model/resolve-model.js";
export { createConcurrencyLimiter } from "./orchestrator/concurrency-limiter.js";
export {
  createOrchestrator,
  type OrchestratorOptions,
  type RuntimeOrchestrator,
} from "./orchestrator/create-orchestrator.js";
export type {
  OrchestratorCounters,
  OrchestratorEvent,
  OrchestratorListener,
} from "./orchestrator/orchestrator-events.js";
export type {
  ChannelLink,
  Orchestrator,
  SendResult,
  ThreadStatus,
} from "./orchestrator/orchestrator-types.js";
export type { ActorMessage, PromptSender, ThreadHandle } from "./orchestrator/thread-handle.js";
export {
  buildSystemPrompt,
  localDate,
  type SystemPromptInput,
} from "./prompt/build-system-prompt.js";
export {
  type AgentRunner,
  type AgentRunnerOptions,
  createAgentRunner,
  type PromptInput,
  type RunnerStats,
  type RunResult,
} from "./runner/create-agent-runner.js";
export { createThreadRunner, type ThreadRunnerOptions } from "./runner/create-thread-runner.js";
export { isAssistant, messageText } from "./runner/message-text.js";
export type {
  RunnerEvent,
  RunnerEventListener,
  RunStopReason,
  UsageTotals,
} from "./runner/runner-events.js";
export {
  createHostSandbox,
  type ExecOptions,
  type ExecResult,
  type Sandbox,
} from "./sandbox/host-sandbox.js";
export { killProcessTree } from "./sandbox/process-tree.js";
export { createStore, type Store } from "./store/create-store.js";
export type { LogEntry } from "./store/log-entry.js";
export { encodeSegment, parseThreadId, type ThreadRef } from "./store/thread-id.js";
export { createCoreTools } from "./tools/create-tools.js";
export type { ToolContext } from "./tools/tool-context.js";
export { createUploadTool, UPLOAD_MAX_BYTES } from "./tools/upload-tool.js";
