import type { AgentTool } from "@mariozechner/pi-agent-core";
import type { TSchema } from "typebox";
import type { Logger } from "../logging/logger.js";
import { toolEnv } from "../sandbox/host-sandbox.js";
import type { ExtraToolSource } from "../tools/create-tools.js";
import { createMcpConnection, type McpConnection } from "./mcp-connection.js";
import { mcpToolResult } from "./mcp-result.js";
import { normaliseToolSchema } from "./mcp-schema.js";
import type { McpServers } from "./mcp-settings.js";
import { mcpToolName } from "./mcp-tool-names.js";
import type { McpServerStatus } from "./types.js";

export interface McpManagerOptions {
  /** The `mcpServers` setting, in its order: the order their tools are offered in. */
  servers: McpServers;
  /**
   * Variables of settings marked secret (secretEnvNames): with the providers' key variables
   * (toolEnv), what a stdio server's environment leaves out.
   */
  secretEnv?: readonly string[];
  /** The model's provider (a shared token such as GH_TOKEN is withheld only for its provider). */
  modelProvider?: string;
  /** GUPPY_MCP_TIMEOUT_SECONDS, in ms. */
  timeoutMs: number;
  logger?: Logger;
  /** guppy's environment (default: process.env). */
  env?: NodeJS.ProcessEnv;
  /** Pauses between restarts (default 1 s doubling to 60 s). */
  backoff?: { initialMs: number; maxMs: number };
}

/**
 * The MCP servers of a guppy process, their tools offered as agent tools. It is an
 * ExtraToolSource: a thread's runner asks it for its tools before each run, and its version
 * tells whether the set changed since.
 */
export interface McpManager extends ExtraToolSource {
  /** Starts connecting every server in the background; never throws. */
  start(): void;
  /** Resolves once every server's first attempt has ended, or after `timeoutMs`, whichever first. */
  ready(timeoutMs: number): Promise<void>;
  /** Each server, its state and its tools, in the configured order. */
  servers(): McpServerStatus[];
  /** A stdio server's process id while it runs (tests, diagnostics). */
  pid(server: string): number | undefined;
  /** Closes every connection and ends the stdio servers' processes. */
  close(): Promise<void>;
}

/**
 * One connection per configured server (mcp-connection.ts); the tools of those connected, in a
 * stable order — the configured server order, then tool name — whatever order they connected
 * in, so the system prompt and a provider's prompt cache stay the same while the set does.
 */
export function createMcpManager(options: McpManagerOptions): McpManager {
  const { logger } = options;
  const baseEnv = environment(
    toolEnv(options.env ?? process.env, options.modelProvider, options.secretEnv),
  );
  let version = 0;
  let built: { version: number; tools: AgentTool[]; statuses: McpServerStatus[] } | undefined;
  /** Schema problems already logged (a server re-listing its tools logs them once). */
  const reported = new Set<string>();
  const connections: McpConnection[] = Object.entries(options.servers).map(([name, config]) =>
    createMcpConnection({
      name,
      config,
      env: config.type === "stdio" ? { ...baseEnv, ...config.env } : {},
      timeoutMs: options.timeoutMs,
      ...(logger ? { logger } : {}),
      ...(options.backoff ? { backoff: options.backoff } : {}),
      onChange: () => {
        version++;
      },
    }),
  );

  const build = () => {
    if (built?.version === version) return built;
    const taken = new Set<string>();
    const tools: AgentTool[] = [];
    const statuses: McpServerStatus[] = [];
    for (const connection of connections) {
      const names: string[] = [];
      const skipped: McpServerStatus["skipped"] = [];
      const listed = [...connection.tools()].sort((a, b) =>
        a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
      );
      for (const info of listed) {
        const schema = normaliseToolSchema(info.inputSchema);
        if (!schema.ok) {
          skipped.push({ tool: info.name, reason: schema.reason });
          const key = `${connection.name}\0${info.name}\0${schema.reason}`;
          if (!reported.has(key)) {
            reported.add(key);
            logger?.warn(
              `MCP tool "${info.name}" of server "${connection.name}" is left out: its input schema cannot be made valid (${schema.reason})`,
              { server: connection.name, tool: info.name },
            );
          }
          continue;
        }
        const name = mcpToolName(connection.name, info.name, taken);
        names.push(name);
        tools.push({
          name,
          label: name,
          description:
            info.description?.trim() ||
            info.title?.trim() ||
            `The ${info.name} tool of the MCP server ${connection.name}`,
          parameters: schema.schema as unknown as TSchema,
          async execute(_id, params, signal) {
            const args = (params ?? {}) as Record<string, unknown>;
            return mcpToolResult(await connection.call(info.name, args, signal));
          },
        });
      }
      statuses.push({
        ...connection.state(),
        name: connection.name,
        transport: connection.config.type,
        tools: names,
        skipped,
      });
    }
    built = { version, tools, statuses };
    return built;
  };

  return {
    version: () => version,
    tools: () => build().tools,
    servers: () => build().statuses,
    start() {
      for (const connection of connections) connection.start();
    },
    async ready(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      });
      await Promise.race([Promise.all(connections.map((c) => c.settled())), timeout]);
      clearTimeout(timer);
    },
    pid: (server) => connections.find((c) => c.name === server)?.pid(),
    async close() {
      await Promise.all(connections.map((c) => c.close()));
      version++;
    },
  };
}

/** An environment's set variables. */
function environment(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined) out[key] = value;
  return out;
}
