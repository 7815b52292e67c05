import { spawn } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MockLlm, requestText, startEchoLlm } from "../helpers/mock-llm.js";
import { cleanEnv, guppyBin, runCli, tempHome } from "../helpers/run-cli.js";

/**
 * Two `guppy chat` on one session would each send the model their own history and save over
 * each other's turns: the second refuses at start.
 */
describe("one guppy chat per session", () => {
  let llm: MockLlm;
  const home = tempHome();
  beforeAll(async () => {
    llm = await startEchoLlm();
  });
  afterAll(async () => {
    await llm.stop();
    home.cleanup();
  });
  const env = () => cleanEnv({ ...llm.env("openai-completions"), GUPPY_HOME: home.home });
  const lockFile = (session: string) => join(home.home, "cli", "local", session, "chat.lock");

  it("a second chat on an open session refuses with one line; another session, or after the first exits, works", async () => {
    const first = spawn(process.execPath, [guppyBin, "chat", "--session", "shared"], {
      env: env(),
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    first.stdout.on("data", (d) => {
      out += d;
    });
    const closed = new Promise<number | null>((resolve) => first.on("close", resolve));
    first.stdin.write("a1\n");
    const deadline = Date.now() + 10_000;
    while (!out.includes("echo: a1") && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(out).toContain("echo: a1");

    const second = await runCli(["chat", "-m", "b1", "--session", "shared"], { env: env() });
    expect(second.code).toBe(2);
    expect(second.stdout).toBe("");
    expect(second.stderr).toBe(
      `guppy: session "shared" is open in another guppy chat (pid ${first.pid}); use --session NAME for another conversation\n`,
    );
    const repl = await runCli(["chat", "--session", "shared"], { env: env(), input: "b2\n" });
    expect(repl.code).toBe(2);
    // Neither reached the model.
    expect(llm.requests().some((r) => /\bb[12]\b/.test(requestText(r)))).toBe(false);

    const other = await runCli(["chat", "-m", "c1", "--session", "other"], { env: env() });
    expect(other.code).toBe(0);
    expect(existsSync(lockFile("other"))).toBe(false);

    first.stdin.end("/exit\n");
    expect(await closed).toBe(0);
    expect(existsSync(lockFile("shared"))).toBe(false);
    const after = await runCli(["chat", "-m", "b3", "--session", "shared"], { env: env() });
    expect(after.code).toBe(0);
    // The context is the one conversation: a1, then b3.
    expect(requestText(llm.requests().at(-1)!)).toMatch(/a1[\s\S]*b3/);
  });

  it("takes over a lock left by a process that is gone", async () => {
    mkdirSync(join(home.home, "cli", "local", "stale"), { recursive: true });
    // A pid no process has (above the kernel's pid_max default of 4,194,304).
    writeFileSync(lockFile("stale"), "4194305\n");
    const r = await runCli(["chat", "-m", "hello", "--session", "stale"], { env: env() });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(existsSync(lockFile("stale"))).toBe(false);
  });
});
