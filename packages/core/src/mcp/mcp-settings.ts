import {
  integerValue,
  isObject,
  type ParseResult,
  type Parser,
} from "../config/setting-parsers.js";
import type { SettingDefinitions, SettingValues } from "../config/settings-schema.js";

// The `mcpServers` setting, in the format other MCP hosts use (Claude Desktop, Cursor, ...):
// `{"name": {"command", "args", "env"}}` starts a stdio server, `{"name": {"url", "headers"}}`
// connects to a Streamable HTTP one. Read from settings.json only: no variable could spell it.

/** A server guppy starts and talks to over its stdin/stdout; it runs as the owner, unsandboxed. */
export interface McpStdioServer {
  type: "stdio";
  command: string;
  args: string[];
  /** Added to guppy's environment for this server (guppy's secrets are withheld from it). */
  env: Record<string, string>;
  cwd?: string;
}

/** A server reached over Streamable HTTP at `url`. */
export interface McpHttpServer {
  type: "http";
  url: string;
  headers: Record<string, string>;
}

export type McpServerConfig = McpStdioServer | McpHttpServer;

/** The configured servers by name, in the order settings.json lists them. */
export type McpServers = Record<string, McpServerConfig>;

const example = '{"files": {"command": "npx", "args": ["-y", "some-mcp-server"]}}';
const expected = `an object of servers by name, each {"command", "args"?, "env"?} or {"url", "headers"?}, e.g. ${example}`;

/** `mcpServers`: each entry a stdio or an HTTP server; a mistake is named with its place. */
export const mcpServersValue: Parser<McpServers> = Object.assign(
  (raw: unknown): ParseResult<McpServers> => {
    const fail = (problem: string) => ({ ok: false as const, expected, problem });
    if (!isObject(raw)) return fail(`mcpServers: expected ${expected}.`);
    const servers: McpServers = {};
    for (const [name, entry] of Object.entries(raw)) {
      const at = `mcpServers.${name}`;
      if (name.trim() === "") return fail("mcpServers: a server's name is empty.");
      const server = serverValue(at, entry);
      if (typeof server === "string") return fail(server);
      servers[name] = server;
    }
    return { ok: true, value: servers };
  },
  { expected },
);

function serverValue(at: string, entry: unknown): McpServerConfig | string {
  if (!isObject(entry))
    return `${at}: expected {"command", "args"?, "env"?} or {"url", "headers"?}.`;
  const known = ["command", "args", "env", "cwd", "url", "headers", "type"];
  const unknown = Object.keys(entry).find((key) => !known.includes(key));
  if (unknown !== undefined) return `${at}: unknown key "${unknown}" (known: ${known.join(", ")}).`;
  const hasCommand = entry.command !== undefined;
  const hasUrl = entry.url !== undefined;
  if (hasCommand === hasUrl)
    return `${at}: give either "command" (stdio) or "url" (HTTP), not ${hasCommand ? "both" : "neither"}.`;
  if (hasCommand) {
    if (typeof entry.command !== "string" || entry.command.trim() === "") {
      return `${at}.command: expected a non-empty string.`;
    }
    const args = entry.args ?? [];
    if (!Array.isArray(args) || !args.every((a) => typeof a === "string")) {
      return `${at}.args: expected a list of strings.`;
    }
    const env = stringRecord(`${at}.env`, entry.env);
    if (typeof env === "string") return env;
    if (entry.cwd !== undefined && typeof entry.cwd !== "string")
      return `${at}.cwd: expected a string.`;
    if (entry.headers !== undefined)
      return `${at}.headers: only an HTTP server ("url") takes headers.`;
    return {
      type: "stdio",
      command: entry.command,
      args: args as string[],
      env,
      ...(typeof entry.cwd === "string" ? { cwd: entry.cwd } : {}),
    };
  }
  if (typeof entry.url !== "string" || !isHttpUrl(entry.url)) {
    return `${at}.url: expected an http(s) URL.`;
  }
  for (const key of ["args", "env", "cwd"] as const) {
    if (entry[key] !== undefined)
      return `${at}.${key}: only a stdio server ("command") takes ${key}.`;
  }
  const headers = stringRecord(`${at}.headers`, entry.headers);
  if (typeof headers === "string") return headers;
  return { type: "http", url: entry.url, headers };
}

function stringRecord(at: string, value: unknown): Record<string, string> | string {
  if (value === undefined) return {};
  if (!isObject(value) || !Object.values(value).every((v) => typeof v === "string")) {
    return `${at}: expected an object of strings.`;
  }
  return value as Record<string, string>;
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

/** The MCP servers, how long `guppy chat` waits for them, and the longest call. */
export const mcpSettings = {
  mcpServers: {
    parse: mcpServersValue,
    description:
      'MCP servers whose tools the agent gets as `<server>__<tool>`: `{"name": {"command", "args", "env"}}` (stdio, runs as you, outside the sandbox) or `{"name": {"url", "headers"}}` (Streamable HTTP)',
  },
  mcpStartSeconds: {
    env: "GUPPY_MCP_START_SECONDS",
    parse: integerValue(0, 600),
    default: 5,
    description:
      "How long `guppy chat` waits for configured MCP servers before its first request (`guppy serve` never waits)",
  },
  mcpTimeoutSeconds: {
    env: "GUPPY_MCP_TIMEOUT_SECONDS",
    parse: integerValue(1, 86_400),
    default: 60,
    description: "Longest an MCP tool call may take",
  },
} satisfies SettingDefinitions;

export type McpSettingValues = SettingValues<typeof mcpSettings>;
