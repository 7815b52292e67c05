import { createLineLogger, createMcpManager, type McpServerStatus } from "@guppy/core";
import { secretEnvNames } from "@guppy/core/config";
import { ExitCode, UsageError } from "../cli/cli-error.js";
import { rejectExtraArguments } from "../cli/extra-arguments.js";
import type { CliArgs } from "../cli/parse-cli-args.js";
import { loadCliConfig } from "./load-cli-config.js";

/**
 * `guppy mcp list`: each server of `mcpServers`, its state (connected, starting, failed and why)
 * and the names its tools have for the model. It connects to the servers itself (a running
 * gateway's connections are its own), gives them GUPPY_MCP_START_SECONDS, prints, and closes them.
 */
export async function mcpCommand(args: CliArgs): Promise<number> {
  const [sub = "list"] = args.positionals;
  if (sub !== "list")
    throw new UsageError(`unknown subcommand "mcp ${sub}" (usage: guppy mcp list)`);
  rejectExtraArguments(args, "guppy mcp list", 1);
  const config = loadCliConfig(args);
  const servers = config.mcpServers ?? {};
  if (Object.keys(servers).length === 0) {
    process.stdout.write(
      `No MCP servers configured. Add them to ${config.settingsPath} as "mcpServers", e.g. {"mcpServers": {"files": {"command": "npx", "args": ["-y", "some-mcp-server"]}}}\n`,
    );
    return ExitCode.ok;
  }
  const mcp = createMcpManager({
    servers,
    secretEnv: secretEnvNames(config.settings),
    timeoutMs: config.mcpTimeoutSeconds * 1000,
    // Why a server failed is in the listing; the stderr tail with --debug.
    logger: createLineLogger({ level: config.debug ? "debug" : "error" }),
  });
  try {
    mcp.start();
    await mcp.ready(config.mcpStartSeconds * 1000);
    process.stdout.write(`${mcp.servers().map(describeServer).join("\n")}\n`);
  } finally {
    await mcp.close();
  }
  return ExitCode.ok;
}

function describeServer(server: McpServerStatus): string {
  const state =
    server.state === "connected"
      ? `connected, ${server.tools.length} tool(s)`
      : server.state === "starting"
        ? "starting (not connected yet)"
        : `failed: ${server.reason}`;
  const lines = [`${server.name} (${server.transport}): ${state}`];
  for (const tool of server.tools) lines.push(`  ${tool}`);
  for (const { tool, reason } of server.skipped) lines.push(`  (left out: ${tool}: ${reason})`);
  return lines.join("\n");
}
