import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isAlive, waitDead } from "../../../core/test/helpers/process-state.js";
import { lastMessage, type MockLlm, requestText, startMockLlm } from "../helpers/mock-llm.js";
import { cleanEnv, guppyBin, runCli, tempHome } from "../helpers/run-cli.js";

describe("interrupting guppy chat", () => {
  let llm: MockLlm;
  const home = tempHome();
  const pidFile = join(home.home, "sleeper.pid");
  beforeAll(async () => {
    llm = await startMockLlm((request) => {
      const last = lastMessage(request);
      if (last?.role === "tool") return { content: "tool finished" };
      const text = requestText({ ...request, messages: [last!] });
      if (text.includes("long job")) {
        return {
          toolCalls: [
            {
              name: "bash",
              arguments: JSON.stringify({ command: `sleep 60 & echo $! > ${pidFile}; wait` }),
            },
          ],
        };
      }
      return { content: `echo: ${text}` };
    });
  });
  afterAll(async () => {
    await llm.stop();
    home.cleanup();
  });
  // The tool hands back its pid, which guppy checks from outside: the host sandbox (under
  // bubblewrap the command has a pid of its own namespace).
  const env = () =>
    cleanEnv({ ...llm.env("openai-completions"), GUPPY_HOME: home.home, GUPPY_SANDBOX: "host" });

  it("Ctrl+C during -m kills the running tool's process tree, exits 130, and the session stays usable", async () => {
    const child = spawn(
      process.execPath,
      [guppyBin, "chat", "-m", "start the long job", "--session", "int"],
      {
        env: env(),
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    // The shell creates the file before `echo` writes the pid into it: wait for the number.
    const pid = () => (existsSync(pidFile) ? Number(readFileSync(pidFile, "utf8").trim()) : 0);
    const deadline = Date.now() + 10_000;
    while (!(pid() > 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    const sleeper = pid();
    expect(sleeper).toBeGreaterThan(0);
    expect(isAlive(sleeper)).toBe(true);
    child.kill("SIGINT");
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code).toBe(130);
    expect(stderr).toContain("guppy: interrupted");
    expect(await waitDead(sleeper)).toBe(true);

    const next = await runCli(["chat", "-m", "are you there", "--session", "int"], { env: env() });
    expect(next.code).toBe(0);
    expect(next.stdout).toBe("echo: are you there\n");
    // The interrupted exchange is still in the context the model sees.
    expect(requestText(llm.requests().at(-1)!)).toContain("start the long job");
  });

  it("the interactive chat handles /status, /new and /exit from piped input", async () => {
    const r = await runCli(["chat", "--session", "repl"], {
      env: env(),
      input: "hello there\n/status\n/new\n/status\n/exit\n",
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("echo: hello there");
    expect(r.stdout).toMatch(/messages\s+2/);
    expect(r.stdout).toContain("Started fresh");
    expect(r.stdout).toMatch(/messages\s+0/);
    expect(r.stdout).toMatch(/model\s+openai\/mock-gpt/);
  });
});
