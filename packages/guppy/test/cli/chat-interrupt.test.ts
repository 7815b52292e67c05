import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  uniqueMarker,
  waitNoneWith,
  waitRunning,
} from "../../../core/test/helpers/process-state.js";
import { lastMessage, type MockLlm, requestText, startMockLlm } from "../helpers/mock-llm.js";
import { cleanEnv, guppyBin, runCli, tempHome } from "../helpers/run-cli.js";

describe("interrupting guppy chat", () => {
  let llm: MockLlm;
  const home = tempHome();
  // The tool's sleep, found by its argument (see pidsWith).
  const sleeper = `60.${uniqueMarker()}`;
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
              arguments: JSON.stringify({ command: `sleep ${sleeper} & wait` }),
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
  // The host sandbox, as a user without bubblewrap has it.
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
    await waitRunning([`sleep ${sleeper}`]);
    child.kill("SIGINT");
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code).toBe(130);
    expect(stderr).toContain("guppy: interrupted");
    expect(await waitNoneWith(sleeper)).toBe(true);

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
