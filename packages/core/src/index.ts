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
export { maskUrlCredentials } from "./config/mask-url-credentials.js";
export { parseJsoncFile } from "./config/parse-jsonc-file.js";
export { booleanValue } from "./config/setting-parsers.js";
export {
  type AccessPolicy,
  type ConfigKey,
  type ConfigValues,
  configKeys,
  type GroupReplies,
  MIN_CONTEXT_WINDOW,
  type SettingDefinition,
  settingsSchema,
  type WireApi,
  wireApis,
} from "./config/settings-schema.js";
export { settingsTable } from "./config/settings-table.js";
export {
  type CompactionMessage,
  type CompactionReason,
  isCompactionMessage,
} from "./context/compaction-message.js";
export { type ContextBudget, computeBudget } from "./context/context-budget.js";
export {
  type CompactionInfo,
  type CompactionOutcome,
  type ContextEngine,
  type ContextStats,
  createContextEngine,
} from "./context/create-context-engine.js";
export { describeCompaction } from "./context/describe-compaction.js";
export { repairPairing } from "./context/repair-pairing.js";
export { createTokenCounter, type TokenCounter } from "./context/token-counter.js";
export {
  createInbox,
  INBOX_FILE,
  type Inbox,
  type InboxLocation,
} from "./inbox/create-inbox.js";
export type { InboxOutcome, InboxRecord, PendingPrompt } from "./inbox/inbox-record.js";
export { createLineLogger, type Logger, type LogLevel, silentLogger } from "./logging/logger.js";
export { type DailyNote, dailyNotePath, readRecentDailyNotes } from "./memory/daily-notes.js";
export { addDays } from "./memory/local-date.js";
export { type MemoryLevel, readMemoryLevels } from "./memory/memory-levels.js";
export { type Scope, type ScopeDir, scopeDirs, scopes } from "./memory/scope-dirs.js";
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
  RESTART_NOTICE,
  type RuntimeOrchestrator,
} from "./orchestrator/create-orchestrator.js";
export { createLogTail, type LogTail } from "./orchestrator/log-tail.js";
export type {
  OrchestratorCounters,
  OrchestratorEvent,
  OrchestratorListener,
} from "./orchestrator/orchestrator-events.js";
export type {
  ChannelLink,
  CompactResult,
  Orchestrator,
  ResetResult,
  SendResult,
  ThreadStatus,
} from "./orchestrator/orchestrator-types.js";
export { ThreadHeldError } from "./orchestrator/orchestrator-types.js";
export type {
  ActorMessage,
  PromptContent,
  PromptSender,
  ThreadHandle,
} from "./orchestrator/thread-handle.js";
export {
  type BootstrapFile,
  type BootstrapFileName,
  bootstrapFileNames,
  readBootstrapFiles,
} from "./prompt/bootstrap-files.js";
export {
  buildSystemPrompt,
  localDate,
  type SystemPromptInput,
} from "./prompt/build-system-prompt.js";
export { capText, DEFAULT_FILE_MAX_CHARS } from "./prompt/cap-text.js";
export { loadPromptSources, type PromptSources } from "./prompt/load-prompt-sources.js";
export {
  createPathMapper,
  identityPath,
  type PathMapping,
  type PathTranslator,
} from "./prompt/path-translation.js";
export {
  type AgentRunner,
  type AgentRunnerOptions,
  createAgentRunner,
  type PromptInput,
  type RunnerStats,
  type RunResult,
} from "./runner/create-agent-runner.js";
export { createThreadRunner, type ThreadRunnerOptions } from "./runner/create-thread-runner.js";
export { isAssistant, messageText, oneLine } from "./runner/message-text.js";
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
export type { OutputOverflow, SpilledFile } from "./sandbox/output-capture.js";
export { killProcessTree } from "./sandbox/process-tree.js";
export {
  killLeftoverTrees,
  killRunningTrees,
  RUNNING_TOOLS_FILE,
  recordRunningTrees,
} from "./sandbox/running-trees.js";
export { type LoadedSkills, loadSkills, type Skill } from "./skills/load-skills.js";
export {
  type ParsedSkill,
  parseSkillFile,
  type SkillFrontmatter,
} from "./skills/parse-skill-file.js";
export { writeFileAtomic } from "./store/atomic-write.js";
export { createStore, type Store } from "./store/create-store.js";
export {
  appendLines,
  forgetAppendState,
  openAppendFd,
  serializeJsonl,
  syncDirectory,
} from "./store/durable-append.js";
export { readJsonl } from "./store/jsonl.js";
export type { LogEntry } from "./store/log-entry.js";
export { lockByPid, lockHolder } from "./store/pid-lock.js";
export {
  canonicalThreadId,
  encodeSegment,
  parseThreadId,
  type ThreadRef,
} from "./store/thread-id.js";
export { type SavedThreadStatus, threadFigures } from "./store/thread-status-file.js";
export { trimTrailingNewlines } from "./text/trailing-newlines.js";
export { createCoreTools } from "./tools/create-tools.js";
export type { ToolContext } from "./tools/tool-context.js";
export { createUploadTool, UPLOAD_MAX_BYTES } from "./tools/upload-tool.js";
