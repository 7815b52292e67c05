import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ChatCompletionRequest } from "@copilotkit/aimock";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MockLlm, startMockLlm } from "../helpers/mock-llm.js";
import { cleanEnv, runCli, tempHome } from "../helpers/run-cli.js";

/** @modelcontextprotocol/server-everything, run over stdio as `node <it> stdio`. */
const everything = fileURLToPath(
  new URL(
    "../../../../node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    import.meta.url,
  ),
);

const text = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content
          .map((p) => (p && typeof p === "object" && "text" in p ? String(p.text) : ""))
          .join("")
      : "";

/** The prompt of this turn (the session's earlier ones are in the request too). */
const lastUser = (request: ChatCompletionRequest) =>
  text(request.messages.filter((m) => m.role === "user").at(-1)?.content);

/**
 * A model that calls everything__echo for a prompt "echo <word>" and answers with what the tool
 * returned once the result is in.
 */
function respond(request: ChatCompletionRequest) {
  const last = request.messages.at(-1);
  if (last?.role === "tool") {
    return { content: `the tool said: ${text(last.content)}` };
  }
  const echo = /echo (\S+)/.exec(lastUser(request));
  if (echo) {
    return {
      toolCalls: [{ name: "everything__echo", arguments: JSON.stringify({ message: echo[1] }) }],
    };
  }
  return { content: "plain" };
}

describe("MCP servers through the CLI", () => {
  let llm: MockLlm;
  const home = tempHome();
  const env = () =>
    cleanEnv({ ...llm.env("openai-completions"), GUPPY_HOME: home.home, GUPPY_SANDBOX: "host" });
  const settings = (value: object) =>
    writeFileSync(join(home.home, "settings.json"), JSON.stringify(value));

  beforeAll(async () => {
    llm = await startMockLlm(respond);
  });
  afterAll(async () => {
    await llm.stop();
    home.cleanup();
  });

  it("guppy chat -m waits for the configured server and the model calls everything__echo", async () => {
    settings({
      mcpServers: { everything: { command: process.execPath, args: [everything, "stdio"] } },
    });
    const before = llm.requests().length;
    const r = await runCli(["chat", "-m", "echo guppy-fish-42"], {
      env: cleanEnv({ ...env(), GUPPY_MCP_START_SECONDS: "60" }),
      timeoutMs: 90_000,
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("the tool said: Echo: guppy-fish-42\n");
    const mine = llm.requests().slice(before);
    // The first request already offered the server's tools, after the built-in ones.
    const offered = (mine[0]?.tools ?? []).map((tool) => tool.function.name);
    expect(offered).toContain("everything__echo");
    expect(offered.indexOf("everything__echo")).toBeGreaterThan(offered.indexOf("bash"));
    const echo = mine[0]?.tools?.find((tool) => tool.function.name === "everything__echo");
    expect(echo?.function.parameters).toMatchObject({
      type: "object",
      properties: { message: { type: "string" } },
    });
  }, 120_000);

  it("a server that cannot start is reported and never fatal: the prompt is answered", async () => {
    settings({ mcpServers: { broken: { command: join(home.home, "no-such-server") } } });
    const before = llm.requests().length;
    const r = await runCli(["chat", "-m", "hello"], { env: env(), timeoutMs: 60_000 });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("plain\n");
    expect(r.stderr).toContain('MCP server "broken" failed to start');
    expect(r.stderr).toContain("ENOENT");
    // Nothing but that report (on a loaded machine its retry a second later may be logged too).
    for (const line of r.stderr.trim().split("\n")) {
      expect(line).toMatch(/^guppy: warning: MCP server "broken" failed to start/);
    }
    const offered = (llm.requests()[before]?.tools ?? []).map((tool) => tool.function.name);
    expect(offered.some((name) => name.startsWith("broken__"))).toBe(false);
  }, 90_000);

  it("guppy mcp list shows each server, its state and its tools", async () => {
    settings({
      mcpServers: {
        everything: { command: process.execPath, args: [everything, "stdio"] },
        broken: { command: join(home.home, "no-such-server") },
      },
    });
    const r = await runCli(["mcp", "list"], {
      env: cleanEnv({ ...env(), GUPPY_MCP_START_SECONDS: "60" }),
      timeoutMs: 90_000,
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^everything \(stdio\): connected, \d+ tool\(s\)$/);
    expect(lines).toContain("  everything__echo");
    expect(lines).toContain("  everything__get-sum");
    expect(lines.at(-1)).toMatch(/^broken \(stdio\): failed: failed to start: spawn .*ENOENT$/);
  }, 120_000);

  it("guppy mcp list without servers says how to add one", async () => {
    settings({});
    const r = await runCli(["mcp", "list"], { env: env() });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("No MCP servers configured. Add them to");
    expect(r.stdout).toContain('"mcpServers"');
  });

  it("a tools rule may name an MCP tool of a configured server, and a wrong one is refused", async () => {
    settings({
      mcpServers: { everything: { command: process.execPath, args: [everything, "stdio"] } },
      tools: { cli: { owner: { deny: ["everything__get-env"] } } },
    });
    const ok = await runCli(["config"], { env: env() });
    expect(ok.code).toBe(0);
    settings({
      mcpServers: { everything: { command: process.execPath, args: [everything, "stdio"] } },
      tools: { cli: { owner: { deny: ["nothing__echo"] } } },
    });
    const bad = await runCli(["mcp", "list"], { env: env() });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown tool "nothing__echo"');
    expect(bad.stderr.trim().split("\n")).toHaveLength(1);
  });
});
