import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MockLlm, startMockLlm } from "../helpers/mock-llm.js";
import { cleanEnv, guppyBin, runCli, tempHome } from "../helpers/run-cli.js";

/** The model's answer: a title change, a clear-screen and a carriage return around the words. */
const ANSWER = "before\u001b]0;PWNED\u0007 \u001b[2J\u001b[Hafter\rover";
/** util-linux's `script` gives the command a terminal (a pseudo-terminal) for its output. */
const SCRIPT = "/usr/bin/script";

describe("guppy chat -m's answer", () => {
  let llm: MockLlm;
  const home = tempHome();
  beforeAll(async () => {
    llm = await startMockLlm(() => ({ content: ANSWER }));
  });
  afterAll(async () => {
    await llm.stop();
    home.cleanup();
  });
  const env = () => cleanEnv({ ...llm.env("openai-completions"), GUPPY_HOME: home.home });

  it("goes to a pipe as the model wrote it", async () => {
    const r = await runCli(["chat", "-m", "hi", "--session", "piped"], { env: env() });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${ANSWER}\n`);
  });

  it.skipIf(!existsSync(SCRIPT))(
    "goes to a terminal as text, never as control sequences",
    async () => {
      // Not spawnSync: the mock LLM answers from this process's event loop.
      const command = `${process.execPath} ${guppyBin} chat -m hi --session tty`;
      const child = spawn(SCRIPT, ["-qec", command, "/dev/null"], {
        env: env(),
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      child.stdout.on("data", (d) => {
        stdout += d;
      });
      const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
      expect(code).toBe(0);
      expect(stdout).toContain("before\\x1b]0;PWNED\\x07 \\x1b[2J\\x1b[Hafter\\rover");
      expect(stdout).not.toContain("\u001b]0;PWNED");
    },
  );
});
