import {
  type AgentRunner,
  type ConcurrencyLimiter,
  createScheduleTool,
  createSearchChannelTool,
  createSubagents,
  createThreadRunner,
  type GuppyConfig,
  type Logger,
  type Redactor,
  type ResolvedModel,
  type Role,
  type ServiceTools,
  type Store,
  type Subagents,
  type ThreadHandle,
} from "@guppy/core";
import type { SandboxConfig } from "@guppy/core/sandbox";

export interface ThreadRunnersOptions {
  config: GuppyConfig;
  resolved: ResolvedModel;
  store: Store;
  logger: Logger;
  redactor: Redactor;
  sandboxConfig: SandboxConfig;
  /** The run slots the orchestrator uses: a spawned child takes one of them. */
  limiter: ConcurrencyLimiter;
  /** Where the subagents' hand-overs are journalled (the gateway's, or a chat session's own). */
  subagentJournal: string;
  /** A thread's channel handle (the `upload` tool's), where the app has channels. */
  threadHandle?: (threadId: string) => ThreadHandle | undefined;
}

/**
 * How `guppy serve` and `guppy chat` make a thread's runner: its tools, the schedule tool and the
 * subagent services, and its children's runners (the parent's workspace, sandbox view and tools
 * without spawn/subagent; an event a child schedules fires into its parent's thread).
 */
export function createThreadRunners(options: ThreadRunnersOptions): {
  subagents: Subagents;
  createRunner(threadId: string): AgentRunner;
} {
  const { config, resolved, store, logger, redactor, sandboxConfig } = options;
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
    createRunner: (threadId) =>
      runner(threadId, {
        ...subagents.tools(threadId),
        schedule: schedule(threadId),
        search_channel: searchChannel(threadId),
      }),
  };
}
