import { existsSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import type { AgentTool } from "@mariozechner/pi-agent-core";
import {
  type FauxProviderRegistration,
  fauxAssistantMessage,
  fauxToolCall,
  registerFauxProvider,
} from "@mariozechner/pi-ai";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Logger } from "../../src/logging/logger.js";
import { createMcpManager, type McpManager } from "../../src/mcp/create-mcp-manager.js";
import type { McpServers } from "../../src/mcp/mcp-settings.js";
import { createThreadRunner } from "../../src/runner/create-thread-runner.js";
import { loadConfig } from "../../src/settings.js";
import { createStore } from "../../src/store/create-store.js";
import { tempHome } from "../helpers/temp-home.js";

/** @modelcontextprotocol/server-everything's entry point, run with `node <it> stdio`. */
const everything = fileURLToPath(
  new URL(
    "../../../../node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    import.meta.url,
  ),
);
const everythingServer = (env: Record<string, string> = {}) => ({
  type: "stdio" as const,
  command: process.execPath,
  args: [everything, "stdio"],
  env,
});

function recordingLogger() {
  const lines: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
  const log = (level: string) => (message: string, fields?: Record<string, unknown>) =>
    lines.push({ level, message, ...(fields ? { fields } : {}) });
  const logger: Logger = {
    debug: log("debug"),
    info: log("info"),
    warn: log("warn"),
    error: log("error"),
  };
  return { logger, lines };
}

async function until(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const toolNamed = (manager: McpManager, name: string): AgentTool => {
  const tool = manager.tools().find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name} in ${manager.tools().map((t) => t.name)}`);
  return tool;
};

const THREAD = "cli:local:default";

describe("the MCP client against server-everything over stdio", () => {
  let t: ReturnType<typeof tempHome>;
  let faux: FauxProviderRegistration;
  let manager: McpManager | undefined;
  beforeEach(() => {
    t = tempHome();
    faux = registerFauxProvider({
      models: [{ id: "faux-1", contextWindow: 100_000, maxTokens: 1000 }],
    });
  });
  afterEach(async () => {
    await manager?.close();
    manager = undefined;
    faux.unregister();
    t.cleanup();
  });

  function runner(env: Record<string, string> = {}) {
    if (!manager) throw new Error("no manager");
    return createThreadRunner({
      threadId: THREAD,
      config: loadConfig({ env: { GUPPY_TIMEZONE: "UTC", ...env }, home: t.home }),
      resolved: {
        ref: "faux/faux-1",
        model: faux.getModel(),
        apiKey: "faux",
        maxTokens: 1000,
        custom: false,
      },
      store: createStore({ home: t.home }),
      sandboxConfig: { type: "host" },
      extraTools: manager,
    });
  }

  it("offers its echo tool as everything__echo through the agent loop", async () => {
    manager = createMcpManager({ servers: { everything: everythingServer() }, timeoutMs: 30_000 });
    manager.start();
    await manager.ready(30_000);
    expect(manager.servers()[0]).toMatchObject({ name: "everything", state: "connected" });
    const prompts: string[] = [];
    const results: string[] = [];
    faux.setResponses([
      (context) => {
        prompts.push(context.systemPrompt ?? "");
        expect(context.tools?.map((tool) => tool.name)).toContain("everything__echo");
        return fauxAssistantMessage([fauxToolCall("everything__echo", { message: "hello fish" })], {
          stopReason: "toolUse",
        });
      },
      (context) => {
        for (const m of context.messages) {
          if (m.role === "toolResult") {
            results.push(m.content.map((c) => (c.type === "text" ? c.text : "")).join(""));
          }
        }
        return fauxAssistantMessage("done");
      },
    ]);
    const result = await runner().prompt({ text: "echo something" });
    expect(result.text).toBe("done");
    expect(results).toEqual(["Echo: hello fish"]);
    expect(prompts[0]).toContain("- everything__echo: Echoes back the input string");
    // Tools sorted by name within the server.
    const names = manager.tools().map((tool) => tool.name);
    expect(names).toEqual([...names].sort());
  });

  it("spills a long result to an artifact, like any tool's", async () => {
    manager = createMcpManager({ servers: { everything: everythingServer() }, timeoutMs: 30_000 });
    manager.start();
    await manager.ready(30_000);
    const long = `${"0123456789".repeat(1000)}END-OF-LONG`;
    let seen = "";
    faux.setResponses([
      () =>
        fauxAssistantMessage([fauxToolCall("everything__echo", { message: long })], {
          stopReason: "toolUse",
        }),
      (context) => {
        const last = context.messages.at(-1);
        if (last?.role === "toolResult") {
          seen = last.content.map((c) => (c.type === "text" ? c.text : "")).join("");
        }
        return fauxAssistantMessage("done");
      },
    ]);
    await runner({ GUPPY_TOOL_RESULT_MAX_CHARS: "2000" }).prompt({ text: "go" });
    expect(seen.length).toBeLessThan(3000);
    expect(seen).toContain("END-OF-LONG");
    const saved = /saved at (\S+\.txt)/.exec(seen)?.[1];
    expect(saved).toBeDefined();
    expect(existsSync(saved as string)).toBe(true);
    expect(readFileSync(saved as string, "utf8")).toBe(`Echo: ${long}`);
  });

  it("withholds guppy's secrets from a stdio server and adds its env", async () => {
    manager = createMcpManager({
      servers: { everything: everythingServer({ FISH_TANK: "blue" }) },
      timeoutMs: 30_000,
      secretEnv: ["GUPPY_API_KEY"],
      modelProvider: "openai",
      env: {
        PATH: process.env.PATH ?? "",
        GUPPY_API_KEY: "sk-secret-1",
        OPENAI_API_KEY: "sk-2",
        KEEP_ME: "yes",
      },
    });
    manager.start();
    await manager.ready(30_000);
    const result = await toolNamed(manager, "everything__get-env").execute("1", {});
    const text = result.content.map((c) => (c.type === "text" ? c.text : "")).join("");
    expect(text).toContain("FISH_TANK");
    expect(text).toContain("KEEP_ME");
    expect(text).not.toContain("sk-secret-1");
    expect(text).not.toContain("sk-2");
  });

  it("maps an image result to image content", async () => {
    manager = createMcpManager({ servers: { everything: everythingServer() }, timeoutMs: 30_000 });
    manager.start();
    await manager.ready(30_000);
    const result = await toolNamed(manager, "everything__get-tiny-image").execute("1", {});
    const image = result.content.find((c) => c.type === "image");
    expect(image).toMatchObject({ type: "image", mimeType: "image/png" });
  });

  it("a server killed mid-call fails the call at once, is restarted and its tools come back", async () => {
    const { logger, lines } = recordingLogger();
    manager = createMcpManager({
      servers: { everything: everythingServer() },
      timeoutMs: 60_000,
      logger,
      backoff: { initialMs: 200, maxMs: 1000 },
    });
    manager.start();
    await manager.ready(30_000);
    const m = manager;
    const pid = m.pid("everything");
    expect(pid).toBeGreaterThan(0);
    const before = m.tools().map((tool) => tool.name);
    const versionBefore = m.version();
    const long = toolNamed(m, "everything__trigger-long-running-operation");
    const started = Date.now();
    const call = long.execute("1", { duration: 50, steps: 5 });
    const outcome = call.then(
      () => "answered",
      (error: Error) => error.message,
    );
    await new Promise((r) => setTimeout(r, 300));
    process.kill(pid as number, "SIGKILL");
    const message = await outcome;
    // Long before the 60 s timeout, and long before the 50 s operation would end.
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(message).toContain('MCP server "everything" stopped during the call');
    // Its tools are gone while it is down...
    await until(() => m.servers()[0]?.state !== "connected", "the server to be seen down");
    // ...and back once it is restarted, under the same names, from a new process.
    await until(() => m.servers()[0]?.state === "connected", "the server to be back");
    expect(m.tools().map((tool) => tool.name)).toEqual(before);
    expect(m.version()).toBeGreaterThan(versionBefore);
    expect(m.pid("everything")).not.toBe(pid);
    const echoed = await toolNamed(m, "everything__echo").execute("2", { message: "again" });
    expect(echoed.content).toEqual([{ type: "text", text: "Echo: again" }]);
    const warning = lines.find((l) => l.level === "warn" && l.message.includes('"everything"'));
    expect(warning?.message).toContain("retrying in");
    // The stderr tail is logged with it.
    expect(String(warning?.fields?.stderr)).toContain("Starting default (STDIO) server");
  });

  it("a server that cannot start is logged, reported failed and not fatal", async () => {
    const { logger, lines } = recordingLogger();
    manager = createMcpManager({
      servers: {
        broken: {
          type: "stdio",
          command: process.execPath,
          args: ["-e", "console.error('no config file here'); process.exit(3)"],
          env: {},
        },
      },
      timeoutMs: 10_000,
      logger,
      backoff: { initialMs: 60_000, maxMs: 60_000 },
    });
    manager.start();
    await manager.ready(30_000);
    const status = manager.servers()[0];
    expect(status?.state).toBe("failed");
    expect(status?.state === "failed" && status.reason).toContain("no config file here");
    expect(manager.tools()).toEqual([]);
    const warning = lines.find((l) => l.level === "warn");
    expect(warning?.fields?.stderr).toBe("no config file here");
  });
});

describe("the MCP client against a Streamable HTTP server", () => {
  let http: Server | undefined;
  let manager: McpManager | undefined;
  afterEach(async () => {
    await manager?.close();
    manager = undefined;
    http?.closeAllConnections();
    await new Promise<void>((resolve) => (http ? http.close(() => resolve()) : resolve()));
    http = undefined;
  });

  /** A stateless MCP server on 127.0.0.1 with `add`, and raw schemas the client must fix or drop. */
  async function startHttpServer(): Promise<{ url: string; seenHeaders: string[] }> {
    const seenHeaders: string[] = [];
    const makeServer = () => {
      const server = new McpServer({ name: "test-http", version: "1.0.0" });
      const addSchema = { a: z.number(), b: z.number() };
      server.registerTool(
        "add",
        { description: "Adds two numbers", inputSchema: addSchema },
        async ({ a, b }) => ({
          content: [{ type: "text", text: String(a + b) }],
        }),
      );
      server.registerTool("fail", { description: "Always fails" }, async () => ({
        content: [{ type: "text", text: "the fish is out of water" }],
        isError: true,
      }));
      // Raw schemas as some servers write them (the SDK's McpServer would not).
      server.server.setRequestHandler(ListToolsRequestSchema, async () => ({
        tools: [
          {
            name: "add",
            description: "Adds two numbers",
            inputSchema: {
              type: "object",
              properties: { a: { $ref: "#/$defs/n" }, b: { $ref: "#/$defs/n" } },
              required: ["a", "b"],
              $defs: { n: { type: "number" } },
            },
          },
          { name: "fail", description: "Always fails", inputSchema: { type: "object" } },
          {
            name: "pick",
            description: "A union at the top",
            inputSchema: {
              type: "object",
              anyOf: [
                { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
                { type: "object", properties: { tags: { type: "array" } } },
              ],
            },
          },
          {
            name: "broken",
            description: "Refers elsewhere",
            inputSchema: { type: "object", properties: { x: { $ref: "https://example.com/x" } } },
          },
        ],
      }));
      return server;
    };
    http = createServer(async (req, res) => {
      seenHeaders.push(String(req.headers["x-fish"] ?? ""));
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
      const server = makeServer();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on("close", () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    });
    await new Promise<void>((resolve) => http?.listen(0, "127.0.0.1", resolve));
    const { port } = http.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}/mcp`, seenHeaders };
  }

  it("connects, fixes or leaves out schemas, calls tools and keeps the configured order", async () => {
    const { url, seenHeaders } = await startHttpServer();
    const { logger, lines } = recordingLogger();
    // The slow stdio server is listed first: its tools come first once it is up, though the
    // HTTP server connects long before it.
    const servers: McpServers = {
      aaa: everythingServer(),
      web: { type: "http", url, headers: { "x-fish": "guppy" } },
    };
    manager = createMcpManager({ servers, timeoutMs: 30_000, logger });
    const m = manager;
    m.start();
    await until(() => m.servers()[1]?.state === "connected", "the HTTP server");
    const early = m.tools().map((tool) => tool.name);
    expect(early).toEqual(["web__add", "web__fail", "web__pick"]);
    expect(seenHeaders).toContain("guppy");
    const skipped = m.servers()[1]?.skipped;
    expect(skipped?.map((s) => s.tool)).toEqual(["broken"]);
    expect(lines.some((l) => l.level === "warn" && l.message.includes('"broken"'))).toBe(true);
    const add = toolNamed(m, "web__add");
    expect(JSON.stringify(add.parameters)).not.toContain("$ref");
    expect((await add.execute("1", { a: 2, b: 3 })).content).toEqual([{ type: "text", text: "5" }]);
    await expect(toolNamed(m, "web__fail").execute("2", {})).rejects.toThrow(
      "the fish is out of water",
    );
    const pick = toolNamed(m, "web__pick").parameters as unknown as Record<string, unknown>;
    expect(pick.anyOf).toBeUndefined();
    expect(pick.properties).toEqual({ id: { type: "string" }, tags: { type: "array", items: {} } });
    await m.ready(30_000);
    await until(() => m.servers()[0]?.state === "connected", "the stdio server");
    const all = m.tools().map((tool) => tool.name);
    expect(all.slice(0, 2)).toEqual(["aaa__echo", "aaa__get-annotated-message"]);
    expect(all.slice(-3)).toEqual(early);
  });

  it("an HTTP server that goes away fails the call and is connected again when back", async () => {
    const { url } = await startHttpServer();
    manager = createMcpManager({
      servers: { web: { type: "http", url, headers: {} } },
      timeoutMs: 10_000,
      backoff: { initialMs: 100, maxMs: 200 },
    });
    const m = manager;
    m.start();
    await m.ready(10_000);
    const port = Number(new URL(url).port);
    const closing = new Promise<void>((resolve) => http?.close(() => resolve()));
    http?.closeAllConnections();
    await closing;
    http = undefined;
    await expect(toolNamed(m, "web__add").execute("1", { a: 1, b: 1 })).rejects.toThrow(
      /unreachable/,
    );
    expect(m.tools()).toEqual([]);
    // The same port again.
    const again = await startHttpServerOn(port);
    await until(() => m.servers()[0]?.state === "connected", "the reconnection");
    expect((await toolNamed(m, "web__add").execute("2", { a: 4, b: 4 })).content).toEqual([
      { type: "text", text: "8" },
    ]);
    await m.close();
    again.closeAllConnections();
    await new Promise<void>((resolve) => again.close(() => resolve()));
  });

  async function startHttpServerOn(port: number): Promise<Server> {
    const server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
      const mcp = new McpServer({ name: "again", version: "1.0.0" });
      mcp.registerTool(
        "add",
        { inputSchema: { a: z.number(), b: z.number() } },
        async ({ a, b }) => ({
          content: [{ type: "text", text: String(a + b) }],
        }),
      );
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on("close", () => void transport.close());
      await mcp.connect(transport);
      await transport.handleRequest(req, res, body);
    });
    await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    return server;
  }
});
