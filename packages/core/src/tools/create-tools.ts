import type { AgentTool } from "@mariozechner/pi-agent-core";
import type { Role, ThreadHandle } from "../types.js";
import { createBashTool } from "./bash-tool.js";
import { createEditTool } from "./edit-tool.js";
import { createReadTool } from "./read-tool.js";
import type { ToolContext } from "./tool-context.js";
import {
  type BuiltinToolName,
  builtinToolNames,
  type ToolPolicySettings,
  toolNamesFor,
} from "./tool-policy.js";
import { createUploadTool } from "./upload-tool.js";
import { createWriteTool } from "./write-tool.js";

/** The built-in tools the app's services make (they need more than a thread's ToolContext). */
export type ServiceToolName =
  | "web_search"
  | "read_url"
  | "search_channel"
  | "schedule"
  | "send_message"
  | "spawn"
  | "subagent";

/**
 * The service tools for one thread, each made on demand for a role (a guest's `search_channel`
 * reaches only its own thread); a name left out is a tool the thread does not have (not wired by
 * the app, or — a subagent's — not allowed: no nesting).
 */
export type ServiceTools = Partial<Record<ServiceToolName, (role: Role) => AgentTool>>;

/** The thread a tool is made for, beyond its ToolContext. */
interface ToolThread {
  /** The thread's channel handle, when it lives on a channel (the `upload` tool needs one). */
  thread?: () => ThreadHandle | undefined;
  /** Tools made by the app's services for this thread. */
  services?: ServiceTools;
}

/** How each built-in tool (tool-policy.ts lists them) is made; undefined where a thread cannot have it. */
const factories: {
  [N in BuiltinToolName]: (ctx: ToolContext, on: ToolThread, role: Role) => AgentTool | undefined;
} = {
  bash: (ctx) => createBashTool(ctx) as AgentTool,
  read: (ctx) => createReadTool(ctx) as AgentTool,
  write: (ctx) => createWriteTool(ctx) as AgentTool,
  edit: (ctx) => createEditTool(ctx) as AgentTool,
  upload: (ctx, on) =>
    on.thread &&
    (createUploadTool({
      workspaceDir: ctx.workspaceDir,
      pathPolicy: ctx.pathPolicy,
      sandbox: ctx.sandbox,
      thread: on.thread,
    }) as AgentTool),
  web_search: (_ctx, on, role) => on.services?.web_search?.(role),
  read_url: (_ctx, on, role) => on.services?.read_url?.(role),
  search_channel: (_ctx, on, role) => on.services?.search_channel?.(role),
  schedule: (_ctx, on, role) => on.services?.schedule?.(role),
  send_message: (_ctx, on, role) => on.services?.send_message?.(role),
  spawn: (_ctx, on, role) => on.services?.spawn?.(role),
  subagent: (_ctx, on, role) => on.services?.subagent?.(role),
};

/** The built-in tools of `names` a thread can have, made for `ctx`, in the order the names come. */
function createBuiltinTools(
  ctx: ToolContext,
  names: readonly BuiltinToolName[],
  on: ToolThread = {},
  role: Role = "owner",
): AgentTool[] {
  return names.flatMap((name) => factories[name](ctx, on, role) ?? []);
}

/** The tools every thread has (no upload: that needs a channel), in a fixed order. */
export function createCoreTools(ctx: ToolContext): AgentTool[] {
  return createBuiltinTools(ctx, ["bash", "read", "write", "edit"]);
}

/**
 * Tools that come and go while a thread lives: an MCP server's, added when it connects and gone
 * while it is down. `version` changes whenever `tools` would give another set, so a thread's
 * role lists (on which its system prompt is cached) are rebuilt only then.
 */
export interface ExtraToolSource {
  version(): number;
  /** The tools now, in a stable order (the same set gives the same order). */
  tools(): readonly AgentTool[];
}

export interface RoleToolsOptions extends ToolThread {
  /** An owner's context: the thread's workspace, sandbox and path policy. */
  owner: ToolContext;
  /** A guest's: the same thread, with a guest's path policy (tool-policy.ts guestPathPolicy). */
  guest: ToolContext;
  /** The thread id's adapter (`telegram`, `cli`, ...): the key of its rules in `policy`. */
  channel: string;
  /** The `tools` setting. */
  policy?: ToolPolicySettings;
}

/**
 * Each role's tool list for one thread, made once: a role gets the same array every run, and
 * the system prompt, built for a run's tools, is cached on that array. A tool the policy does
 * not give a role is left out of the list, so the model is never offered it.
 */
export function createRoleTools(options: RoleToolsOptions): Record<Role, AgentTool[]> {
  const make = (role: Role) => {
    const ctx = options[role];
    const available = createBuiltinTools(ctx, builtinToolNames, options, role);
    const names = toolNamesFor(
      options.policy,
      options.channel,
      role,
      available.map((tool) => tool.name),
    );
    return available.filter((tool) => names.includes(tool.name));
  };
  return { owner: make("owner"), guest: make("guest") };
}

/**
 * Each role's tools for a run: its built-in list (createRoleTools), then the `extra` tools the
 * `tools` setting gives it (they are named in it by their full names; a guest has none by
 * default). The same array is returned while `extra`'s version stays, so the system prompt,
 * cached on that array, is rebuilt only when the set changes.
 */
export function withExtraTools(
  builtins: Record<Role, AgentTool[]>,
  extra: ExtraToolSource | undefined,
  rules: { channel: string; policy?: ToolPolicySettings },
): (role: Role) => AgentTool[] {
  if (!extra) return (role) => builtins[role];
  const cache = new Map<Role, { version: number; signature: string; tools: AgentTool[] }>();
  return (role) => {
    const version = extra.version();
    const cached = cache.get(role);
    if (cached?.version === version) return cached.tools;
    const more = extra.tools();
    const names = toolNamesFor(
      rules.policy,
      rules.channel,
      role,
      more.map((tool) => tool.name),
    );
    const chosen = more.filter((tool) => names.includes(tool.name));
    // A server that restarted with the same tools keeps the list (and the cached prompt).
    const signature = JSON.stringify(chosen.map((t) => [t.name, t.description, t.parameters]));
    const tools =
      cached?.signature === signature
        ? cached.tools
        : chosen.length === 0
          ? builtins[role]
          : [...builtins[role], ...chosen];
    cache.set(role, { version, signature, tools });
    return tools;
  };
}
