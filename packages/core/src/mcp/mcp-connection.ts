import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Logger } from "../logging/logger.js";
import type { McpCallResult } from "./mcp-result.js";
import type { McpServerConfig } from "./mcp-settings.js";
import type { McpServerState, McpToolInfo } from "./types.js";

// One configured server: its process (stdio) or its URL (Streamable HTTP), kept connected. A
// server that fails to start or dies is logged with the tail of its stderr and tried again with
// growing pauses; its tools are absent meanwhile, and its calls in flight fail at once.

export interface McpConnectionOptions {
  name: string;
  config: McpServerConfig;
  /** A stdio server's whole environment (guppy's minus its secrets, plus the server's `env`). */
  env: Record<string, string>;
  /** The longest a call (and the connect handshake, and a tools/list page) may take. */
  timeoutMs: number;
  logger?: Logger;
  /** Called whenever the state or the tool list changes. */
  onChange: () => void;
  /** The pause before the first retry, doubled after each failure up to `maxMs` (1 s .. 60 s). */
  backoff?: { initialMs: number; maxMs: number };
}

export interface McpConnection {
  readonly name: string;
  readonly config: McpServerConfig;
  state(): McpServerState;
  /** The server's tools while it is connected; none otherwise. */
  tools(): readonly McpToolInfo[];
  /** Starts connecting (once). */
  start(): void;
  /** Resolves once the first attempt has ended, connected or failed. */
  settled(): Promise<void>;
  /** Calls `tool`; rejects at once when the server dies, and after `timeoutMs` without an answer. */
  call(tool: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<McpCallResult>;
  /** The stdio server's process id while it runs. */
  pid(): number | undefined;
  /** Disconnects and ends a stdio server's process; no retry follows. */
  close(): Promise<void>;
}

type Sdk = Awaited<ReturnType<typeof loadSdk>>;

/**
 * The SDK, loaded at the first connection: a guppy without MCP servers never pays for it, and a
 * gateway with them is ready before it has loaded. Each transport is loaded when a server uses it.
 */
async function loadSdk() {
  const [client, types] = await Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    import("@modelcontextprotocol/sdk/types.js"),
  ]);
  return {
    Client: client.Client,
    McpError: types.McpError,
    ErrorCode: types.ErrorCode,
    ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
  };
}

/** Lines of a server's stderr kept for the log line that says it failed. */
const STDERR_TAIL_LINES = 20;
/** A connection up this long before it died starts the pauses over from the shortest. */
const STABLE_MS = 60_000;
/** tools/list pages read at most (a server whose cursor never ends is cut off). */
const MAX_PAGES = 100;

export function createMcpConnection(options: McpConnectionOptions): McpConnection {
  const { name, config, logger } = options;
  const backoff = options.backoff ?? { initialMs: 1000, maxMs: 60_000 };
  let sdk: Sdk | undefined;
  let state: McpServerState = { state: "starting" };
  let tools: McpToolInfo[] = [];
  /** The client being connected or connected; `connected` once its handshake and list are done. */
  let live: { client: Client; pid: () => number | undefined } | undefined;
  let connected: Client | undefined;
  let started = false;
  let closed = false;
  /** Bumped at each attempt and failure: a late report of an attempt already handled is ignored. */
  let attempt = 0;
  let delay = backoff.initialMs;
  let connectedAt = 0;
  let retry: NodeJS.Timeout | undefined;
  let stderrTail: string[] = [];
  let markSettled: () => void = () => {};
  const settledOnce = new Promise<void>((resolve) => {
    markSettled = resolve;
  });

  const set = (next: McpServerState) => {
    state = next;
    options.onChange();
  };

  const keepStderr = (chunk: Buffer | string) => {
    const lines = String(chunk)
      .split(/\r?\n/)
      .filter((line) => line.trim() !== "");
    stderrTail = [...stderrTail, ...lines].slice(-STDERR_TAIL_LINES);
  };

  const makeTransport = async () => {
    if (config.type === "http") {
      const { StreamableHTTPClientTransport } = await import(
        "@modelcontextprotocol/sdk/client/streamableHttp.js"
      );
      return new StreamableHTTPClientTransport(new URL(config.url), {
        requestInit: { headers: config.headers },
      });
    }
    const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
    const transport = new StdioClientTransport({
      command: config.command,
      args: config.args,
      env: options.env,
      ...(config.cwd ? { cwd: config.cwd } : {}),
      stderr: "pipe",
    });
    transport.stderr?.on("data", keepStderr);
    return transport;
  };

  const listAll = async (client: Client): Promise<McpToolInfo[]> => {
    const all: McpToolInfo[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = await client.listTools(cursor ? { cursor } : undefined, {
        timeout: options.timeoutMs,
      });
      all.push(...result.tools);
      cursor = result.nextCursor;
      if (!cursor) break;
    }
    return all;
  };

  const fail = (generation: number, reason: string) => {
    if (generation !== attempt || closed) return;
    attempt++;
    const old = live?.client;
    live = undefined;
    connected = undefined;
    tools = [];
    // Its process may be alive still (it answered badly, or an HTTP server went away).
    void old?.close().catch(() => {});
    if (connectedAt > 0 && Date.now() - connectedAt >= STABLE_MS) delay = backoff.initialMs;
    connectedAt = 0;
    const wait = delay;
    delay = Math.min(delay * 2, backoff.maxMs);
    set({ state: "failed", reason, retryInMs: wait });
    logger?.warn(
      `MCP server "${name}" ${reason}; its tools are unavailable, retrying in ${seconds(wait)}`,
      { server: name, ...(stderrTail.length > 0 ? { stderr: stderrTail.join("\n") } : {}) },
    );
    retry = setTimeout(() => void connect(), wait);
    retry.unref();
  };

  async function connect(): Promise<void> {
    const generation = ++attempt;
    stderrTail = [];
    if (state.state !== "starting") set({ state: "starting" });
    try {
      const [loaded, transport] = await Promise.all([loadSdk(), makeTransport()]);
      sdk = loaded;
      if (closed || generation !== attempt) return;
      const client = new loaded.Client({ name: "guppy", version: "0.1.0" }, { capabilities: {} });
      live = {
        client,
        pid: () => ("pid" in transport ? (transport.pid ?? undefined) : undefined),
      };
      // A stdio server's process ended (or the connection closed): its calls in flight were
      // rejected by the SDK already; it is started again.
      // (Before that, the handshake or the list fails and says why.)
      client.onclose = () => {
        if (connected === client) fail(generation, "stopped (its connection closed)");
      };
      client.onerror = (error) =>
        logger?.debug(`MCP server "${name}": ${error.message}`, { server: name });
      await client.connect(transport, { timeout: options.timeoutMs });
      const listed = await listAll(client);
      if (closed || generation !== attempt) return;
      client.setNotificationHandler(loaded.ToolListChangedNotificationSchema, async () => {
        try {
          const next = await listAll(client);
          if (connected !== client) return;
          tools = next;
          options.onChange();
        } catch (error) {
          logger?.warn(`MCP server "${name}": could not list its changed tools`, {
            server: name,
            error: describe(error),
          });
        }
      });
      connected = client;
      tools = listed;
      connectedAt = Date.now();
      set({ state: "connected" });
      logger?.info(`MCP server "${name}" connected with ${listed.length} tool(s)`, {
        server: name,
      });
    } catch (error) {
      const last = stderrTail.at(-1);
      fail(generation, `failed to start: ${describe(error)}${last ? ` (stderr: ${last})` : ""}`);
    } finally {
      markSettled();
    }
  }

  return {
    name,
    config,
    state: () => state,
    tools: () => tools,
    start() {
      if (started || closed) return;
      started = true;
      void connect();
    },
    settled: () => settledOnce,
    pid: () => live?.pid(),
    async call(tool, args, signal) {
      const client = connected;
      if (!client || state.state !== "connected") {
        const why = state.state === "failed" ? `failed (${state.reason})` : "still starting";
        throw new Error(`MCP server "${name}" is not connected: it ${why}.`);
      }
      const generation = attempt;
      try {
        return (await client.callTool({ name: tool, arguments: args }, undefined, {
          ...(signal ? { signal } : {}),
          timeout: options.timeoutMs,
        })) as McpCallResult;
      } catch (error) {
        if (signal?.aborted) throw error;
        const { McpError, ErrorCode } = sdk as Sdk;
        if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
          throw new Error(
            `MCP server "${name}" did not answer ${tool} within ${seconds(options.timeoutMs)} (GUPPY_MCP_TIMEOUT_SECONDS).`,
          );
        }
        if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) {
          throw new Error(
            `MCP server "${name}" stopped during the call to ${tool}; it is being restarted.`,
          );
        }
        // Not an answer from the server: an HTTP server that went away. Connect again.
        if (config.type === "http" && !(error instanceof McpError)) {
          fail(generation, `is unreachable: ${describe(error)}`);
          throw new Error(`MCP server "${name}" is unreachable: ${describe(error)}.`);
        }
        throw error;
      }
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      const client = live?.client;
      live = undefined;
      connected = undefined;
      tools = [];
      state = { state: "failed", reason: "closed" };
      markSettled();
      await client?.close().catch(() => {});
    },
  };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${(ms / 1000).toFixed(1)}s`;
}
