import { join } from "node:path";
import { closestName, integerValue, isObject, type Parser } from "../config/setting-parsers.js";
import type { SettingDefinitions, SettingValues } from "../config/settings-schema.js";
import { createPathPolicy, type PathPolicy } from "../sandbox/path-policy.js";
import { secretDenials } from "../sandbox/thread-view.js";
import type { Role } from "../types.js";
import { MAX_BASH_TIMEOUT_SECONDS } from "./bash-timeout.js";

// Which tools a run gets: each role's default set, narrowed or widened per channel by the `tools`
// setting. Names only here; create-tools.ts makes the tools.

/**
 * The built-in tools, in the order the model sees them, and whether a guest has each by default.
 * A new tool is one line here (and its factory in create-tools.ts, which the compiler asks for).
 */
export const builtinTools = {
  bash: { guest: false },
  read: { guest: true },
  write: { guest: false },
  edit: { guest: false },
  upload: { guest: false },
  // The web (the owner's search quota; fetches from the owner's network) and the channel's history
  // (a guest's search reaches only its own thread).
  web_search: { guest: false },
  read_url: { guest: false },
  search_channel: { guest: true },
  // Made by the app's services (ServiceTools), where it wires them: events, messaging, subagents.
  schedule: { guest: false },
  send_message: { guest: false },
  spawn: { guest: false },
  subagent: { guest: false },
} as const satisfies Record<string, { guest: boolean }>;

export type BuiltinToolName = keyof typeof builtinTools;

export const builtinToolNames = Object.keys(builtinTools) as BuiltinToolName[];

/** The roles a `tools` rule can name. */
export const roles: readonly Role[] = ["owner", "guest"];

/** An MCP server's tools are named `<server>__<tool>`: a rule names them before they connect. */
export const MCP_TOOL_SEPARATOR = "__";

/** One role's rule on one channel: `allow` replaces the role's default set, `deny` removes from it. */
export interface ToolRule {
  allow?: string[];
  deny?: string[];
}

/**
 * The `tools` setting: rules by channel — a thread id's adapter (`telegram`, `slack`, `discord`,
 * `http`, `cli` for the terminal) — and role.
 */
export type ToolPolicySettings = Record<string, Partial<Record<Role, ToolRule>>>;

/**
 * The names of the tools `role` gets on `channel`, in the order of `available` (the tools the
 * thread can have at all): the role's default set (an owner every tool, a guest those marked
 * `guest`), or the rule's `allow` list instead; then minus its `deny` list, which wins.
 */
export function toolNamesFor(
  policy: ToolPolicySettings | undefined,
  channel: string,
  role: Role,
  available: readonly string[],
): string[] {
  const rule = policy?.[channel]?.[role];
  const allow = rule?.allow;
  const base = allow
    ? available.filter((name) => allow.includes(name))
    : available.filter((name) => role === "owner" || isGuestDefault(name));
  return base.filter((name) => !rule?.deny?.includes(name));
}

function isGuestDefault(name: string): boolean {
  return Object.hasOwn(builtinTools, name) && builtinTools[name as BuiltinToolName].guest;
}

const example = '{"telegram": {"guest": {"allow": ["read"]}}}';

/**
 * The `tools` setting's parser: an object of channels, each an object of roles, each with
 * `allow` and/or `deny` lists of tool names. A name must be a built-in tool or lie under the
 * `<server>__` prefix of one of `mcpServers` (MCP tools connect later, so only their prefix is
 * known at start). Channel names are checked by the app, which knows its channels
 * (toolPolicyChannelProblem).
 */
export function toolPolicyValue(mcpServers: readonly string[] = []): Parser<ToolPolicySettings> {
  const expected = `an object of channels, each of roles (owner, guest), each with "allow" and/or "deny" lists of tool names, e.g. ${example}`;
  const fail = (problem: string) => ({ ok: false as const, expected, problem });
  const parse = (raw: unknown) => {
    if (!isObject(raw)) return fail(`tools: expected ${expected}.`);
    const policy: ToolPolicySettings = {};
    for (const [channel, byRole] of Object.entries(raw)) {
      const at = `tools.${channel}`;
      if (!isObject(byRole)) {
        return fail(`${at}: expected an object of roles (owner, guest), e.g. ${example}.`);
      }
      const rules: Partial<Record<Role, ToolRule>> = {};
      for (const [role, rule] of Object.entries(byRole)) {
        if (!(roles as readonly string[]).includes(role)) {
          return fail(`${at}: ${unknownName("role", role, roles)}`);
        }
        const problem = ruleProblem(`${at}.${role}`, rule, mcpServers);
        if (typeof problem === "string") return fail(problem);
        rules[role as Role] = problem.rule;
      }
      policy[channel] = rules;
    }
    return { ok: true as const, value: policy };
  };
  return Object.assign(parse, { expected });
}

function ruleProblem(
  at: string,
  rule: unknown,
  mcpServers: readonly string[],
): string | { rule: ToolRule } {
  const keys = ["allow", "deny"] as const;
  if (!isObject(rule)) return `${at}: expected an object with "allow" and/or "deny" lists.`;
  const parsed: ToolRule = {};
  for (const [key, names] of Object.entries(rule)) {
    if (!(keys as readonly string[]).includes(key))
      return `${at}: ${unknownName("key", key, keys)}`;
    const listAt = `${at}.${key}`;
    if (!Array.isArray(names) || !names.every((n) => typeof n === "string")) {
      return `${listAt}: expected a list of tool names, like ["read"].`;
    }
    for (const name of names) {
      if (!isKnownTool(name, mcpServers)) {
        const known = [...builtinToolNames, ...mcpServers.map((s) => `${s}${MCP_TOOL_SEPARATOR}*`)];
        return `${listAt}: ${unknownName("tool", name, known)}`;
      }
    }
    parsed[key as keyof ToolRule] = names;
  }
  return { rule: parsed };
}

function isKnownTool(name: string, mcpServers: readonly string[]): boolean {
  if (Object.hasOwn(builtinTools, name)) return true;
  const cut = name.indexOf(MCP_TOOL_SEPARATOR);
  return (
    cut > 0 &&
    cut + MCP_TOOL_SEPARATOR.length < name.length &&
    mcpServers.includes(name.slice(0, cut))
  );
}

/** `unknown tool "bsh" — did you mean "bash"? (known: bash, read, ...)` */
export function unknownName(kind: string, name: string, known: readonly string[]): string {
  const hint = closestName(
    name,
    known.filter((k) => !k.endsWith("*")),
  );
  const close = hint ? ` — did you mean "${hint}"?` : "";
  return `unknown ${kind} ${JSON.stringify(name)}${close} (${kind}s: ${known.join(", ")})`;
}

/**
 * What is wrong with the channels a `tools` setting names, given the channels the app has
 * (thread id adapters), as a problem line (`tools.telegarm: unknown channel ...`); undefined
 * when every one is known.
 */
export function toolPolicyChannelProblem(
  policy: ToolPolicySettings | undefined,
  channels: readonly string[],
): string | undefined {
  for (const channel of Object.keys(policy ?? {})) {
    if (!channels.includes(channel)) {
      return `tools.${channel}: ${unknownName("channel", channel, channels)}`;
    }
  }
  return undefined;
}

/**
 * What a guest's file tools may touch: its thread's workspace and the attachments it sent, and
 * nothing of guppy's own files. The workspace is writable so that an owner who allows a guest
 * `write` or `edit` gets a working tool; the default guest set has only `read`.
 */
export function guestPathPolicy(options: {
  home: string;
  workspaceDir: string;
  attachmentsDir: string;
}): PathPolicy {
  return createPathPolicy({
    scope: "a guest's tools",
    grants: [
      { path: options.workspaceDir, access: "rw", label: "the workspace" },
      { path: options.attachmentsDir, access: "ro", label: "the attachments" },
    ],
    // guppy's secret files, and its logs (a key a command printed may be in them).
    denials: [
      ...secretDenials(options.home),
      { path: join(options.home, "logs"), reason: "guppy's logs" },
    ],
  });
}

/** The tools' settings: long output, bash's timeout, and which tools each channel and role gets. */
export const toolSettings = {
  toolResultMaxChars: {
    env: "GUPPY_TOOL_RESULT_MAX_CHARS",
    parse: integerValue(200),
    default: 10_000,
    description: "Longest tool output kept in context; the rest is saved to a file",
  },
  bashTimeoutSeconds: {
    env: "GUPPY_BASH_TIMEOUT_SECONDS",
    parse: integerValue(1, MAX_BASH_TIMEOUT_SECONDS),
    default: 120,
    description: `Default timeout of a bash tool call; the model may set its own per call, up to ${MAX_BASH_TIMEOUT_SECONDS} (24 h)`,
  },
  tools: {
    parse: toolPolicyValue(),
    // It may name an MCP server's tools (`<server>__<tool>`) of the servers settings.json lists.
    parserFor: (file) =>
      toolPolicyValue(isObject(file.mcpServers) ? Object.keys(file.mcpServers) : []),
    description:
      "Tools per channel and role: `allow` replaces the role's default set, `deny` removes from it (see Tools and roles)",
  },
} satisfies SettingDefinitions;

export type ToolSettingValues = SettingValues<typeof toolSettings>;
