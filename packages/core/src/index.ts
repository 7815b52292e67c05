export { ConfigError, isConfigError } from "./config/config-error.js";
export {
  type ConfigSource,
  type ConfigWith,
  describeConfig,
  type GuppyConfig,
  kebab,
  type LoadConfigOptions,
  loadConfig,
  maskSecret,
  resolveHome,
  withAppSettings,
} from "./config/load-config.js";
export { maskUrlCredentials } from "./config/mask-url-credentials.js";
export { parseJsoncFile } from "./config/parse-jsonc-file.js";
export {
  booleanValue,
  hostValue,
  integerValue,
  listValue,
  oneOf,
  type Parser,
  stringValue,
  tokenValue,
  urlValue,
} from "./config/setting-parsers.js";
export {
  type ConfigKey,
  type ConfigValues,
  configKeys,
  MIN_CONTEXT_WINDOW,
  type SettingDefinition,
  type SettingDefinitions,
  type SettingValues,
  secretEnvNames,
  settingsSchema,
  type WireApi,
  wireApis,
} from "./config/settings-schema.js";
export { settingsTable } from "./config/settings-table.js";
export { type ContextBudget, computeBudget } from "./context/compaction.js";
export { isCompactionMessage } from "./context/compaction-message.js";
export { type ContextEngine, createContextEngine } from "./context/create-context-engine.js";
export { describeCompaction } from "./context/describe-compaction.js";
export { repairPairing } from "./context/llm-messages.js";
export { createTokenCounter, type TokenCounter } from "./context/token-counter.js";
export {
  appendLines,
  forgetAppendState,
  openAppendFd,
  serializeJsonl,
  syncDirectory,
} from "./fs/durable-append.js";
export { readJsonl } from "./fs/jsonl.js";
export { lockByPid, lockHolder } from "./fs/pid-lock.js";
export { writeFileAtomic } from "./fs/write.js";
export {
  createInbox,
  INBOX_FILE,
  type Inbox,
  type InboxLocation,
} from "./inbox/create-inbox.js";
export type { InboxOutcome, InboxRecord, PendingPrompt } from "./inbox/inbox-record.js";
export { createLineLogger, type Logger, type LogLevel, silentLogger } from "./logging/logger.js";
export {
  addDays,
  type DailyNote,
  dailyNotePath,
  type MemoryLevel,
  readMemoryLevels,
  readRecentDailyNotes,
  type Scope,
  type ScopeDir,
  scopeDirs,
  scopes,
} from "./memory/memory.js";
export {
  DEFAULT_CUSTOM_CONTEXT_WINDOW,
  type DiscoveredModel,
  discoverLocalModel,
  envKeyName,
  localServers,
  noModelMessage,
  type ResolvedModel,
  resolveModel,
} from "./model/resolve-model.js";
export { createConcurrencyLimiter } from "./orchestrator/concurrency-limiter.js";
export {
  createOrchestrator,
  type OrchestratorOptions,
  ThreadHeldError,
} from "./orchestrator/create-orchestrator.js";
export { createLogTail, type LogTail } from "./orchestrator/log-tail.js";
export { RESTART_NOTICE } from "./orchestrator/shutdown.js";
export {
  buildSystemPrompt,
  capText,
  DEFAULT_FILE_MAX_CHARS,
  localDate,
  type SystemPromptInput,
} from "./prompt/build-system-prompt.js";
export {
  type BootstrapFile,
  type BootstrapFileName,
  bootstrapFileNames,
  loadPromptSources,
  type PromptSources,
  readBootstrapFiles,
} from "./prompt/prompt-sources.js";
export { type AgentRunnerOptions, createAgentRunner } from "./runner/create-agent-runner.js";
export { createThreadRunner, type ThreadRunnerOptions } from "./runner/create-thread-runner.js";
export { isAssistant, messageText, oneLine, trimTrailingNewlines } from "./runner/message-text.js";
export type { ExecOptions, ExecResult, OutputOverflow, SpilledFile } from "./sandbox/exec.js";
export {
  killLeftoverTrees,
  killProcessTree,
  killRunningTrees,
  RUNNING_TOOLS_FILE,
  recordRunningTrees,
} from "./sandbox/process-tree.js";
export {
  createHostSandbox,
  createPathMapper,
  createSandbox,
  identityPath,
  type PathMapping,
  type PathTranslator,
  type Sandbox,
  type SandboxConfig,
} from "./sandbox/sandbox.js";
export {
  type LoadedSkills,
  loadSkills,
  type ParsedSkill,
  parseSkillFile,
  type Skill,
  type SkillFrontmatter,
} from "./skills/load-skills.js";
export { createStore, type Store } from "./store/create-store.js";
export type { LogEntry } from "./store/thread-layout.js";
export {
  canonicalThreadId,
  encodeSegment,
  parseThreadId,
  type ThreadRef,
} from "./store/thread-layout.js";
export { threadFigures } from "./store/thread-status-file.js";
export { createCoreTools } from "./tools/create-tools.js";
export { excerptHeadTail, spillOutput } from "./tools/spill-output.js";
export type { ToolContext } from "./tools/tool-context.js";
export { createUploadTool, UPLOAD_MAX_BYTES } from "./tools/upload-tool.js";
export type * from "./types.js";
