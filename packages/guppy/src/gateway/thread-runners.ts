import {
  type AgentRunner,
  type ConcurrencyLimiter,
  createMcpManager,
  createScheduleTool,
  createSearchChannelTool,
  createSubagents,
  createThreadRunner,
  type GuppyConfig,
  type Logger,
  type McpManager,
  type Redactor,
  type ResolvedModel,
  type Role,
  type ServiceTools,
  type Store,
  type Subagents,
  type ThreadHandle,
} from "@guppy/core";
import { secretEnvNames } from "@guppy/core/config";
import type { SandboxConfig } from "@guppy/core/sandbox";

export interface ThreadRunnersOptions {
  config: GuppyConfig;
  resolved: ResolvedModel;
  store: Store;
  logger: Logger;
  redactor?: Redactor;
  sandboxConfig: SandboxConfig;
  /** The run slots the orchestrator uses: a spawned child takes one of them. */
  limiter: ConcurrencyLimiter;
  /** Where the subagents' hand-overs are journalled (the gateway's, or a chat session's own). */
  subagentJournal: string;
  /** A thread's channel handle (the `upload` tool's), where the app has channels. */
  threadHandle?: (threadId: string) => ThreadHandle | undefined;
  /** The directory every runner's tools work in instead of their thread's workspace (`guppy chat --workspace`). */
  workspaceDir?: string;
}

/**
 * How `guppy serve` and `guppy chat` make a thread's runner: its tools, the schedule tool and the
 * subagent services, and its children's runners (the parent's workspace, sandbox view and tools
 * without spawn/subagent; an event a child schedules fires into its parent's thread). Every
 * runner offers the tools of the MCP servers (`mcpServers`) connected at its run; the caller
 * starts `mcp` when it suits it (the gateway once it is ready) and closes it when it stops.
 */
export function createThreadRunners(options: ThreadRunnersOptions): {
  subagents: Subagents;
  createRunner(threadId: string): AgentRunner;
  /** The MCP servers' connections; undefined when none is configured. */
  mcp: McpManager | undefined;
} {
  const { config, resolved, store, logger, redactor, sandboxConfig } = options;
  const mcp = mcpServers(config, resolved, logger);
  // The tool only writes event files: a gateway on this home fires them.
  const schedule = (threadId: string) => () =>
    createScheduleTool({ home: config.home, threadId, timezone: config.timezone });
  // The thread's (a child's: its parent's) logs, and its chat platform's messages where the
  // channel's handle can list them (Slack, Discord); HTTP and the terminal have the logs only.
  const searchChannel = (threadId: string) => (role: Role) =>
    createSearchChannelTool({
      home: config.home,
      threadId,
      role,
      timezone: config.timezone,
      platformHistory: () => options.threadHandle?.(threadId)?.history,
    });
  const runner = (threadId: string, services: ServiceTools, workspaceThreadId?: string) =>
    createThreadRunner({
      threadId,
      ...(workspaceThreadId ? { workspaceThreadId } : {}),
      ...(options.workspaceDir ? { workspaceDir: options.workspaceDir } : {}),
      config,
      resolved,
      store,
      logger,
      redactor,
      sandboxConfig,
      ...(options.threadHandle
        ? { threadHandle: () => options.threadHandle?.(workspaceThreadId ?? threadId) }
        : {}),
      services,
      ...(mcp ? { extraTools: mcp } : {}),
    });
  const subagents = createSubagents({
    store,
    logger,
    limiter: options.limiter,
    maxSubagents: config.maxSubagents,
    toolResultMaxChars: config.toolResultMaxChars,
    journalPath: options.subagentJournal,
    createRunner: (childId, parentId, childTools) =>
      runner(
        childId,
        { ...childTools, schedule: schedule(parentId), search_channel: searchChannel(parentId) },
        parentId,
      ),
  });
  return {
    subagents,
    mcp,
    createRunner: (threadId) =>
      runner(threadId, {
        ...subagents.tools(threadId),
        schedule: schedule(threadId),
        search_channel: searchChannel(threadId),
      }),
  };
}

/** The configured MCP servers (not started yet); undefined when there are none. */
function mcpServers(
  config: GuppyConfig,
  resolved: ResolvedModel,
  logger: Logger,
): McpManager | undefined {
  const servers = config.mcpServers ?? {};
  if (Object.keys(servers).length === 0) return undefined;
  return createMcpManager({
    servers,
    secretEnv: secretEnvNames(config.settings),
    modelProvider: resolved.model.provider,
    timeoutMs: config.mcpTimeoutSeconds * 1000,
    logger,
  });
}
