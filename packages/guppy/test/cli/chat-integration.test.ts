import { spawn } from "node:child_process";
import { closeSync, existsSync, openSync } from "node:fs";
import type { ChatCompletionRequest, FixtureResponse } from "@copilotkit/aimock";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../helpers/free-port.js";
import {
  lastMessage,
  type MockLlm,
  requestText,
  startMockLlm,
  type WireApi,
} from "../helpers/mock-llm.js";
import { cleanEnv, guppyBin, runCli, tempHome } from "../helpers/run-cli.js";

type Script = (request: ChatCompletionRequest, index: number) => FixtureResponse;

/** Default behaviour: "run-bash X" asks for `echo X`; a tool result is answered with its text. */
const toolScript: Script = (request) => {
  const last = lastMessage(request);
  if (last?.role === "tool")
    return { content: `Tool said: ${String(last.content).split("\n")[0]}` };
  const text = requestText({ ...request, messages: [last!] });
  const bash = /run-bash (\S+)/.exec(text);
  if (bash)
    return {
      toolCalls: [{ name: "bash", arguments: JSON.stringify({ command: `echo ${bash[1]}` }) }],
    };
  if (text.includes("bad-args"))
    return { toolCalls: [{ name: "bash", arguments: "{not json at all" }] };
  return { content: `You said: ${text}` };
};

describe.each<WireApi>(["openai-completions", "anthropic-messages"])(
  "guppy chat -m over %s",
  (api) => {
    let llm: MockLlm;
    let script: Script = toolScript;
    const home = tempHome();
    const env = (extra: Record<string, string> = {}) =>
      cleanEnv({ ...llm.env(api), GUPPY_HOME: home.home, ...extra });

    beforeAll(async () => {
      llm = await startMockLlm((request, index) => script(request, index));
    });
    afterAll(async () => {
      await llm.stop();
      home.cleanup();
    });
    afterEach(() => {
      script = toolScript;
      llm.requests().length = 0;
    });

    it("runs a two-round tool call: the model asks for bash, gets its output and answers with it", async () => {
      const r = await runCli(["chat", "-m", "please run-bash marker-7731", "--session", "tools"], {
        env: env(),
      });
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(r.stdout).toBe("Tool said: marker-7731\n");
      const requests = llm.requests();
      expect(requests).toHaveLength(2);
      const toolResult = lastMessage(requests[1]!);
      expect(toolResult?.role).toBe("tool");
      expect(String(toolResult?.content)).toContain("marker-7731");
      expect(String(toolResult?.content)).toContain("[exit code 0]");
    });

    it("retries a 429 and then succeeds", async () => {
      llm.mock.nextRequestError(429, { message: "slow down", type: "rate_limit_error" });
      const r = await runCli(["chat", "-m", "hello after 429", "--session", "retry"], {
        env: env(),
      });
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("hello after 429");
      const chatCalls = llm.mock.getRequests().filter((e) => /messages$|completions$/.test(e.path));
      expect(chatCalls.filter((e) => e.response.status === 429).length).toBeGreaterThanOrEqual(1);
    });

    it("fails clearly on a persistent 500, exits non-zero, and the thread stays usable", async () => {
      script = () => ({
        error: { message: "upstream is on fire", type: "server_error" },
        status: 500,
      });
      const failed = await runCli(["chat", "-m", "first try", "--session", "broken"], {
        env: env({ GUPPY_MAX_RETRIES: "1" }),
      });
      expect(failed.code).toBe(1);
      expect(failed.stdout).toBe("");
      expect(failed.stderr.trim().split("\n")).toHaveLength(1);
      expect(failed.stderr).toMatch(/^guppy: .*500/);
      expect(failed.stderr).not.toMatch(/\n\s+at /);

      script = toolScript;
      const ok = await runCli(["chat", "-m", "second try", "--session", "broken"], { env: env() });
      expect(ok.code).toBe(0);
      expect(ok.stdout).toContain("second try");
    });

    it("answers malformed tool arguments with an error tool result and continues the loop", async () => {
      const r = await runCli(["chat", "-m", "bad-args please", "--session", "badargs"], {
        env: env(),
      });
      expect(r.code).toBe(0);
      const requests = llm.requests();
      expect(requests).toHaveLength(2);
      const toolResult = lastMessage(requests[1]!);
      expect(toolResult?.role).toBe("tool");
      expect(String(toolResult?.content)).toMatch(/Validation failed for tool "bash"/);
      expect(r.stdout).toMatch(/^Tool said: Validation failed/);
    });

    it("remembers the conversation across restarts of the same session", async () => {
      const first = await runCli(
        ["chat", "-m", "my cat is called Mistral", "--session", "memory"],
        {
          env: env(),
        },
      );
      expect(first.code).toBe(0);
      const second = await runCli(["chat", "-m", "what is my cat called?", "--session", "memory"], {
        env: env(),
      });
      expect(second.code).toBe(0);
      const request = llm.requests().at(-1)!;
      const texts = request.messages.map(
        (m) => `${m.role}:${requestText({ ...request, messages: [m] })}`,
      );
      expect(texts).toContain("user:my cat is called Mistral");
      expect(texts).toContain("assistant:You said: my cat is called Mistral");
      expect(texts.at(-1)).toBe("user:what is my cat called?");

      const other = await runCli(["chat", "-m", "fresh session?", "--session", "elsewhere"], {
        env: env(),
      });
      expect(other.code).toBe(0);
      expect(requestText(llm.requests().at(-1)!)).not.toContain("Mistral");
    });
  },
);

describe("guppy command line", () => {
  it("prints its version", async () => {
    const r = await runCli(["--version"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^guppy \d+\.\d+\.\d+\n$/);
  });

  it.each([
    ["--version", "--debug"],
    ["chat", "--version"],
    ["config", "-V", "--no-debug"],
    ["version", "--debug"],
  ])("prints the same version with other arguments: %j", async (...args) => {
    const alone = await runCli(["--version"]);
    const r = await runCli(args);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(alone.stdout);
  });

  it("exits with one line naming the variables to set when no model is configured", async () => {
    const home = tempHome();
    try {
      const r = await runCli(["chat", "-m", "hi"], { env: cleanEnv({ GUPPY_HOME: home.home }) });
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toContain("GUPPY_MODEL");
      expect(r.stderr).toContain("GUPPY_BASE_URL");
    } finally {
      home.cleanup();
    }
  });

  it("names the endpoint it cannot reach, and why; refuses one with a password, masked", async () => {
    const home = tempHome();
    const port = await freePort(); // nothing listens there
    const run = (baseUrl: string, args = ["-m", "hi"], input = "") =>
      runCli(["chat", ...args], {
        input,
        env: cleanEnv({
          GUPPY_HOME: home.home,
          GUPPY_MODEL: "openai/mock-gpt",
          GUPPY_BASE_URL: baseUrl,
          GUPPY_MAX_RETRIES: "0",
        }),
      });
    try {
      const refused = await run(`http://127.0.0.1:${port}/v1`);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toBe(
        `guppy: cannot reach the model at http://127.0.0.1:${port}/v1: connection refused\n`,
      );
      // fetch refuses a URL with credentials, so the setting is refused before any request.
      const secret = await run(`http://bob:hunter2secret@127.0.0.1:${port}/v1`);
      expect(secret.code).toBe(2);
      expect(secret.stderr).toBe(
        `guppy: Invalid environment variable GUPPY_BASE_URL is "http://bob:****@127.0.0.1:${port}/v1": expected an http(s) URL without a user name or password (fetch refuses those), such as http://127.0.0.1:11434/v1.\n`,
      );
      const repl = await run(`http://127.0.0.1:${port}/v1`, [], "hi\n/exit\n");
      expect(repl.stdout).toContain(
        `error: cannot reach the model at http://127.0.0.1:${port}/v1: connection refused\n`,
      );
    } finally {
      home.cleanup();
    }
  });

  it("names a bad environment value in one line", async () => {
    const r = await runCli(["chat", "-m", "hi"], {
      env: cleanEnv({ GUPPY_MAX_TOOL_ROUNDS: "many", GUPPY_HOME: "/tmp/guppy-never-created" }),
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'guppy: Invalid environment variable GUPPY_MAX_TOOL_ROUNDS is "many": expected an integer from 1 to 1000.\n',
    );
  });

  it("init creates the data directory and config prints it with secrets masked", async () => {
    const home = tempHome();
    try {
      const init = await runCli(["init", "--home", `${home.home}/g`]);
      expect(init.code).toBe(0);
      expect(init.stdout).toContain("settings.json");
      const config = await runCli(["config", "--home", `${home.home}/g`], {
        env: cleanEnv({ GUPPY_API_KEY: "sk-secret-value-1234567890" }),
      });
      expect(config.code).toBe(0);
      expect(config.stdout).toMatch(/maxToolRounds\s+GUPPY_MAX_TOOL_ROUNDS\s+25\s+\(settings\)/);
      expect(config.stdout).not.toContain("secret-value");
    } finally {
      home.cleanup();
    }
  });

  it("rejects an unknown command and option without a stack trace", async () => {
    const r = await runCli(["frobnicate"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('guppy: unknown command "frobnicate" (see guppy --help)\n');
    const o = await runCli(["chat", "--nope"]);
    expect(o.code).toBe(2);
    expect(o.stderr.split("\n")).toHaveLength(2);
  });

  it.runIf(existsSync("/dev/full"))(
    "says in one line that its output could not be written (a full disk), and exits 1",
    async () => {
      const home = tempHome();
      const full = openSync("/dev/full", "w");
      try {
        const child = spawn(process.execPath, [guppyBin, "config", "--home", home.home], {
          env: cleanEnv(),
          stdio: ["ignore", full, "pipe"],
        });
        let stderr = "";
        child.stderr?.on("data", (d) => {
          stderr += d;
        });
        const code = await new Promise((r) => child.on("close", r));
        expect(code).toBe(1);
        expect(stderr).toBe(
          "guppy: could not write the output: ENOSPC: no space left on device, write\n",
        );
      } finally {
        closeSync(full);
        home.cleanup();
      }
    },
  );
});
