import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { join } from "node:path";
import type { ChatCompletionRequest, FixtureResponse } from "@copilotkit/aimock";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HeaderProxy, startHeaderProxy } from "../helpers/header-proxy.js";
import { lastMessage, type MockLlm, requestText, startMockLlm } from "../helpers/mock-llm.js";
import { cleanEnv, runCli, tempHome } from "../helpers/run-cli.js";

/** Keys as guppy.env and the real environment give them (long enough to be redacted). */
const FILE_KEY = "sk-from-guppy-env-0123456789f3";
const REAL_KEY = "sk-from-real-env-9876543210ab";

/** "run-bash CMD" asks for bash; a tool result is answered with the whole output. */
function script(request: ChatCompletionRequest): FixtureResponse {
  const last = lastMessage(request);
  const text = requestText({ ...request, messages: last ? [last] : [] });
  if (last?.role === "tool") return { content: `Tool said: ${text}` };
  const bash = /^run-bash (.+)$/.exec(text);
  if (bash?.[1]) {
    return { toolCalls: [{ name: "bash", arguments: JSON.stringify({ command: bash[1] }) }] };
  }
  return { content: `You said: ${text}` };
}

/** The Authorization header of each model request guppy sent, oldest first. */
function authorizations(proxy: HeaderProxy): string[] {
  return proxy.seen.filter((r) => /\/chat\/completions$/.test(r.path)).map((r) => r.authorization);
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** Whether something listens on 127.0.0.1:`port` (a local model server on this machine). */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

describe("<home>/guppy.env: one place for keys, read by every command", () => {
  let llm: MockLlm;
  let proxy: HeaderProxy;
  const home = tempHome();
  const envFile = join(home.home, "guppy.env");
  beforeAll(async () => {
    llm = await startMockLlm(script);
    proxy = await startHeaderProxy(llm.url);
  });
  afterAll(async () => {
    await proxy.stop();
    await llm.stop();
    home.cleanup();
  });

  /** The mock as a custom OpenAI endpoint, with no GUPPY_API_KEY: the key is OPENAI_API_KEY. */
  const env = (extra: Record<string, string> = {}) => {
    const { GUPPY_API_KEY: _, ...mock } = llm.env("openai-completions");
    return cleanEnv({
      GUPPY_HOME: home.home,
      GUPPY_SANDBOX: "host",
      ...mock,
      GUPPY_BASE_URL: `${proxy.url}/v1`,
      ...extra,
    });
  };

  it("`guppy config`: the real environment beats it, it beats settings.json, and says so", async () => {
    writeFileSync(
      join(home.home, "settings.json"),
      '{ "maxTokens": 1000, "maxToolRounds": 7, "queueDepth": 3 }',
    );
    writeFileSync(
      envFile,
      `# keys\nGUPPY_MAX_TOKENS=2000\nGUPPY_MAX_TOOL_ROUNDS=8\nANTHROPIC_API_KEY=${FILE_KEY}\n`,
      { mode: 0o600 },
    );
    const r = await runCli(["config"], {
      env: env({ GUPPY_MAX_TOOL_ROUNDS: "9", OPENAI_API_KEY: REAL_KEY }),
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const row = (key: string) => r.stdout.split("\n").find((l) => l.startsWith(`${key} `));
    expect(row("maxToolRounds")).toMatch(/ 9 {2}\(env\)$/);
    expect(row("maxTokens")).toMatch(/ 2000 {2}\(guppy\.env\)$/);
    expect(row("queueDepth")).toMatch(/ 3 {2}\(settings\)$/);
    expect(r.stdout).toContain(`\nsettings.json: ${join(home.home, "settings.json")}\n`);
    expect(r.stdout).toContain(`\nguppy.env: ${envFile} (3 variables)\n`);
    // Provider keys present, masked, with where each came from.
    expect(r.stdout).toMatch(/\nprovider keys:\n/);
    expect(r.stdout).toMatch(/\n {2}ANTHROPIC_API_KEY {2}sk-…f3 \(masked\) {2}\(guppy\.env\)\n/);
    expect(r.stdout).toMatch(/\n {2}OPENAI_API_KEY {5}sk-…ab \(masked\) {2}\(env\)\n/);
    expect(r.stdout).not.toContain(FILE_KEY);
    expect(r.stdout).not.toContain(REAL_KEY);
    // The local server guppy would use with no model configured (none here, unless one runs).
    const local = r.stdout.split("\n").find((l) => l.startsWith("local server: "));
    if (!(await listening(11434)) && !(await listening(1234))) {
      expect(local).toBe(
        "local server: none answering (Ollama http://127.0.0.1:11434/v1, LM Studio http://127.0.0.1:1234/v1)",
      );
    } else {
      expect(local).toBeDefined();
    }
  });

  it("a line that is not KEY=value is a warning naming the file and line; a bad value names guppy.env", async () => {
    writeFileSync(envFile, "GUPPY_MAX_TOKENS=2000\nthis is not a variable\n");
    const warned = await runCli(["config"], { env: env() });
    expect(warned.code).toBe(0);
    expect(warned.stderr).toBe(
      `guppy: warning: ${envFile} line 2: expected KEY=value, got "this is not a variable"\n`,
    );
    writeFileSync(envFile, "GUPPY_MAX_TOKENS=lots\n");
    const bad = await runCli(["config"], { env: env() });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      `guppy: Invalid variable GUPPY_MAX_TOKENS in ${envFile} is "lots": expected an integer ≥ 1.\n`,
    );
  });

  it("a provider key variable in it reaches the model; the real environment's wins", async () => {
    writeFileSync(envFile, `OPENAI_API_KEY=${FILE_KEY}\n`, { mode: 0o600 });
    const before = authorizations(proxy).length;
    const fromFile = await runCli(["chat", "-m", "hello", "--session", "file-key"], {
      env: env(),
    });
    expect(fromFile.stderr).toBe("");
    expect(fromFile.stdout).toBe("You said: hello\n");
    expect(authorizations(proxy).slice(before)).toEqual([`Bearer ${FILE_KEY}`]);

    const fromEnv = await runCli(["chat", "-m", "hello", "--session", "real-key"], {
      env: env({ OPENAI_API_KEY: REAL_KEY }),
    });
    expect(fromEnv.code).toBe(0);
    expect(authorizations(proxy).slice(before)).toEqual([
      `Bearer ${FILE_KEY}`,
      `Bearer ${REAL_KEY}`,
    ]);
  });

  it("its key never reaches a tool command's environment, nor guppy's files", async () => {
    writeFileSync(envFile, `OPENAI_API_KEY=${FILE_KEY}\nGUPPY_TOOL_SEEN=plain-value\n`, {
      mode: 0o600,
    });
    const r = await runCli(["chat", "-m", "run-bash env | sort", "--session", "tool-env"], {
      env: env(),
    });
    expect(r.stderr).toBe("");
    expect(authorizations(proxy).at(-1)).toBe(`Bearer ${FILE_KEY}`);
    const afterTool = JSON.stringify(llm.requests().at(-1));
    // The command ran and printed its environment: PATH, and the file's plain variable...
    expect(afterTool).toContain("PATH=");
    expect(afterTool).toContain("GUPPY_TOOL_SEEN=plain-value");
    // ...but not the key, by value or by name (not even as "[redacted: ...]").
    expect(afterTool).not.toContain(FILE_KEY);
    expect(afterTool).not.toContain("OPENAI_API_KEY");
    expect(r.stdout).not.toContain("OPENAI_API_KEY");
    for (const file of filesUnder(home.home).filter((f) => f !== envFile)) {
      expect(readFileSync(file, "utf8").includes(FILE_KEY), file).toBe(false);
    }
  });
});
