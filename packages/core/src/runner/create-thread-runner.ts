import { platform, release } from "node:os";
import { join } from "node:path";
import type { AgentTool, StreamFn } from "@mariozechner/pi-agent-core";
import type { LoadedConfig } from "../config/load-config.js";
import { secretEnvNames } from "../config/settings-schema.js";
import type { ContextSettingValues } from "../context/compaction.js";
import type { Logger } from "../logging/logger.js";
import { createRedactor, type Redactor } from "../logging/redact.js";
import type { ModelSettingValues } from "../model/model-settings.js";
import type { ResolvedModel } from "../model/resolve-model.js";
import { buildSystemPrompt, localDate } from "../prompt/build-system-prompt.js";
import type { PromptSources } from "../prompt/prompt-sources.js";
import { loadPromptSourcesShared } from "../prompt/prompt-sources.js";
import { configuredSecrets } from "../sandbox/host-sandbox.js";
import {
  createSandbox,
  type Sandbox,
  type SandboxConfig,
  withAgentPaths,
} from "../sandbox/sandbox.js";
import { sandboxPathPolicy } from "../sandbox/thread-view.js";
import type { SkillSettingValues } from "../skills/load-skills.js";
import type { Store } from "../store/create-store.js";
import { ATTACHMENTS_DIR, parseThreadId } from "../store/thread-layout.js";
import { type TimeSettingValues, timeStamp } from "../time/local-time.js";
import {
  createRoleTools,
  type ExtraToolSource,
  type ServiceTools,
  withExtraTools,
} from "../tools/create-tools.js";
import { createReadUrlTool } from "../tools/read-url-tool.js";
import type { ToolContext } from "../tools/tool-context.js";
import { guestPathPolicy, type ToolSettingValues } from "../tools/tool-policy.js";
import { createWebSearchTool } from "../tools/web-search-tool.js";
import type { ThreadHandle } from "../types.js";
import { createUsageRecorder } from "../usage/usage-ledger.js";
import { createWebSearch, searchProviderFrom } from "../web/web-search.js";
import type { WebSettingValues } from "../web/web-settings.js";
import { createAgentRunner } from "./create-agent-runner.js";
import type { RunnerSettingValues } from "./runner-settings.js";

/** What a thread's runner reads of the configuration (a GuppyConfig has it all). */
export type ThreadRunnerConfig = LoadedConfig &
  ModelSettingValues &
  RunnerSettingValues &
  ToolSettingValues &
  ContextSettingValues &
  SkillSettingValues &
  TimeSettingValues &
  WebSettingValues;

import type { AgentRunner } from "./types.js";

export interface ThreadRunnerOptions {
  threadId: string;
  config: ThreadRunnerConfig;
  resolved: ResolvedModel;
  store: Store;
  /**
   * Where the thread's commands run (resolveSandbox's choice; default: the host). The owner's
   * file tools follow the same rule set.
   */
  sandboxConfig?: SandboxConfig;
  /** A sandbox made elsewhere (tests): used instead of one built from `sandboxConfig`. */
  sandbox?: Sandbox;
  logger?: Logger;
  /** Takes the configuration's secrets out of what runs store, emit and send (default: built here). */
  redactor?: Redactor;
  baseStreamFn?: StreamFn;
  /** The thread's channel handle; when given, the `upload` tool is added (files back to the chat). */
  threadHandle?: () => ThreadHandle | undefined;
  /** Tools the app's services make for this thread (schedule, send_message, spawn, subagent). */
  services?: ServiceTools;
  /**
   * Tools that come and go (the MCP servers'), added after the built-in ones for the roles the
   * `tools` setting gives them; the run's list is rebuilt when their version changes.
   */
  extraTools?: ExtraToolSource;
  /**
   * The thread whose workspace, saved outputs and sandbox view the tools use (default: this
   * one): a subagent's is its parent's, so it works on the same files under the same rules.
   */
  workspaceThreadId?: string;
  /**
   * A directory the tools work in instead of the thread's own workspace (`guppy chat
   * --workspace DIR`): bash starts there, the system prompt names it, and under bubblewrap it is
   * bound read-write (as an extra mount: the file tools' policy grants it too). An absolute path.
   */
  workspaceDir?: string;
}

/** Everything a thread needs to run: its tools (bound to its workspace), system prompt and runner. */
export function createThreadRunner(options: ThreadRunnerOptions): AgentRunner {
  const { threadId, config, store, resolved } = options;
  const workThread = options.workspaceThreadId ?? threadId;
  const workspaceDir = options.workspaceDir ?? store.workspaceDir(workThread);
  const sandboxConfig = withWorkspaceMount(
    options.sandboxConfig ?? { type: "host" },
    options.workspaceDir,
  );
  const sandbox =
    options.sandbox ??
    createSandbox(sandboxConfig, {
      home: config.home,
      threadId: workThread,
      modelProvider: resolved.model.provider,
      secretEnv: secretEnvNames(config.settings),
    });
  const redactor =
    options.redactor ??
    createRedactor(configuredSecrets(config, resolved), resolved.oauth?.secrets);
  // A sign-in's refresh that fails is logged where the runs are (once: oauth-key.ts).
  if (options.logger) resolved.oauth?.useLogger(options.logger);
  const ctx: ToolContext = {
    workspaceDir,
    artifactsDir: () => store.artifactsDir(workThread),
    sandbox,
    toolResultMaxChars: config.toolResultMaxChars,
    bashTimeoutSeconds: config.bashTimeoutSeconds,
    pathPolicy: sandboxPathPolicy(sandboxConfig, config.home, workThread),
    redactor,
  };
  // Each role's tools, per the `tools` setting for this thread's channel; a guest's file tools
  // reach only its workspace and attachments. Paths in their results are the sandbox's.
  const roleTools = createRoleTools({
    owner: ctx,
    guest: {
      ...ctx,
      pathPolicy: guestPathPolicy({
        home: config.home,
        workspaceDir,
        attachmentsDir: join(store.threadDir(workThread), ATTACHMENTS_DIR),
      }),
    },
    thread: options.threadHandle,
    services: {
      // read_url needs only the fetch settings and the thread's artifacts: every thread has it.
      read_url: () =>
        createReadUrlTool({
          policy: {
            allowPrivate: config.fetchAllowPrivate,
            allowHosts: config.fetchAllowHosts ?? [],
          },
          artifactsDir: ctx.artifactsDir,
          redactor,
        }) as AgentTool,
      ...webSearchService(config),
      ...options.services,
    },
    channel: parseThreadId(threadId).adapter,
    policy: config.tools,
  });
  const ownerTools = withAgentPaths(roleTools.owner, sandbox);
  const guestTools = withAgentPaths(roleTools.guest, sandbox);
  const toolsFor = withExtraTools({ owner: ownerTools, guest: guestTools }, options.extraTools, {
    channel: parseThreadId(threadId).adapter,
    policy: config.tools,
  });
  /** The lists made for guests: their system prompt is a guest's. */
  const guestLists = new WeakSet<readonly AgentTool[]>();
  const os = `${platform()} ${release()}`;
  const warned = new Set<string>();
  let last:
    | { sources: PromptSources; date: string; tools: readonly AgentTool[]; prompt: string }
    | undefined;
  return createAgentRunner({
    threadId,
    store,
    model: resolved.model,
    apiKey: resolved.getApiKey ?? resolved.apiKey,
    maxTokens: resolved.maxTokens,
    maxRetries: config.maxRetries,
    maxRetryWaitSeconds: config.maxRetryWaitSeconds,
    maxAnswerChars: config.maxAnswerChars,
    ...(config.temperature !== undefined ? { temperature: config.temperature } : {}),
    streamIdleTimeoutSeconds: config.streamIdleTimeoutSeconds,
    maxToolRounds: config.maxToolRounds,
    compactReserveTokens: config.compactReserveTokens,
    compactKeepRecentTokens: config.compactKeepRecentTokens,
    toolResultMaxChars: config.toolResultMaxChars,
    tools: ownerTools,
    toolsFor: (role) => {
      const tools = toolsFor(role);
      if (role === "guest") guestLists.add(tools);
      return tools;
    },
    // Re-read before every run (shared by a channel's threads for a moment, see
    // prompt-sources.ts): memory, daily notes, identity files and skills may have changed.
    // The same sources on the same day give the same bytes, so the last prompt is reused.
    systemPrompt: (runTools) => {
      const now = new Date();
      // A subagent reads its parent's memory and skills: the paths its view grants.
      const sources = loadPromptSourcesShared({
        home: config.home,
        threadId: workThread,
        now,
        timeZone: config.timezone,
      });
      const date = localDate(now, config.timezone);
      if (last && last.sources === sources && last.date === date && last.tools === runTools) {
        return last.prompt;
      }
      for (const warning of sources.warnings) {
        if (!warned.has(warning)) options.logger?.warn(warning);
        warned.add(warning);
      }
      const prompt = buildSystemPrompt({
        threadId,
        workspaceDir,
        home: config.home,
        tools: runTools,
        date,
        os,
        sources,
        skillsInline: config.skillsInline,
        toAgentPath: sandbox.toAgentPath,
        audience: guestLists.has(runTools) ? "guest" : "owner",
      });
      last = { sources, date, tools: runTools, prompt };
      return prompt;
    },
    logger: options.logger,
    redactor,
    baseStreamFn: options.baseStreamFn,
    // Every request of every thread, subagent and heartbeat goes into `<home>/usage.jsonl`.
    onUsage: createUsageRecorder({
      home: config.home,
      threadId,
      model: resolved.model,
      subscription: resolved.subscription === true,
      ...(options.logger ? { logger: options.logger } : {}),
    }),
    timeStamp: (now) => timeStamp(now, config.timezone),
  });
}

/** `config` whose bubblewrap view also binds `dir` read-write (host and docker: as they are). */
function withWorkspaceMount(config: SandboxConfig, dir: string | undefined): SandboxConfig {
  if (dir === undefined || config.type !== "bwrap") return config;
  return { ...config, mounts: [...config.mounts, { path: dir, access: "rw" }] };
}

/** `web_search` when a search provider is configured (the app's own services win). */
function webSearchService(config: ThreadRunnerConfig): ServiceTools {
  const provider = searchProviderFrom(config);
  if (!provider) return {};
  const tool = createWebSearchTool({ search: createWebSearch({ provider }) }) as AgentTool;
  return { web_search: () => tool };
}
