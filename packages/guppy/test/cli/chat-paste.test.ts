import { spawn } from "node:child_process";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { lastMessage, type MockLlm, requestText, startMockLlm } from "../helpers/mock-llm.js";
import { type CliResult, cleanEnv, guppyBin, runCli, tempHome } from "../helpers/run-cli.js";

const code = "please review this:\ndef f(x):\n    return x";

/** `guppy <args>` with `chunks` written to its stdin one at a time, `gapMs` apart, then closed. */
function runCliChunked(
  args: string[],
  env: NodeJS.ProcessEnv,
  chunks: string[],
  gapMs = 150,
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [guppyBin, ...args], {
      env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`guppy ${args.join(" ")} timed out\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, 20_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    const write = (i: number) => {
      if (i === chunks.length) {
        child.stdin.end();
        return;
      }
      child.stdin.write(chunks[i]!);
      setTimeout(() => write(i + 1), gapMs);
    };
    write(0);
  });
}

describe("pasting into guppy chat", () => {
  let llm: MockLlm;
  const home = tempHome();
  beforeAll(async () => {
    llm = await startMockLlm((request) => ({
      content: `echo: ${requestText({ ...request, messages: [lastMessage(request)!] })}`,
    }));
  });
  afterAll(async () => {
    await llm.stop();
    home.cleanup();
  });
  afterEach(() => {
    llm.requests().length = 0;
  });
  const env = () => cleanEnv({ ...llm.env("openai-completions"), GUPPY_HOME: home.home });
  const userMessages = () =>
    llm.requests().map((request) => requestText({ ...request, messages: [lastMessage(request)!] }));

  it("lines that arrive together are one prompt, with their indentation", async () => {
    const r = await runCli(["chat", "--session", "chunk"], { env: env(), input: `${code}\n` });
    expect(r.code).toBe(0);
    expect(userMessages()).toEqual([code]);
    expect(r.stdout).toContain("(3 lines, one prompt)");
  });

  it("a command line still acts as a command after the lines before it", async () => {
    const r = await runCli(["chat", "--session", "commands"], {
      env: env(),
      input: "hi\n  there\n/status\n/exit\nnever sent\n",
    });
    expect(r.code).toBe(0);
    expect(userMessages()).toEqual(["hi\n  there"]);
    expect(r.stdout).toMatch(/messages\s+2/);

    llm.requests().length = 0;
    const hi = await runCli(["chat", "--session", "hi"], { env: env(), input: "hi\n/exit\n" });
    expect(hi.code).toBe(0);
    expect(userMessages()).toEqual(["hi"]);
    expect(hi.stdout).toContain("echo: hi");
  });

  it("a bracketed paste is one prompt, even in pieces and with a /command line inside", async () => {
    const r = await runCliChunked(["chat", "--session", "bracketed"], env(), [
      "\x1b[200~please review this:\n",
      "/exit\n",
      "def f(x):\n    return x\n",
      "\x1b[201~",
      // A paste that ends inside a line: Enter sends it with what was typed after it.
      "\x1b[200~one\n",
      "  two\x1b[201~",
      " and three\n",
      "/exit\n",
    ]);
    expect(r.code).toBe(0);
    expect(userMessages()).toEqual([
      "please review this:\n/exit\ndef f(x):\n    return x",
      "one\n  two and three",
    ]);
  });
});
