import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lastMessage, type MockLlm, requestText, startMockLlm } from "../helpers/mock-llm.js";
import { cleanEnv, guppyBin, tempHome } from "../helpers/run-cli.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A closed terminal (SIGHUP) or `kill` (SIGTERM) ends `guppy chat` like Ctrl+C ends a run: the
 * tool command's tree dies with it (it runs in its own process group, which neither signal
 * reaches), the turn is saved, and the exit code is 128 + the signal's number.
 */
describe.concurrent("guppy chat stopped by SIGHUP or SIGTERM", () => {
  let llm: MockLlm;
  const home = tempHome();
  beforeAll(async () => {
    llm = await startMockLlm((request) => {
      const last = lastMessage(request);
      if (last?.role === "tool") return { content: "tool finished" };
      const text = requestText({ ...request, messages: [last!] });
      // "slow job NAME": writes NAME.started, then after 3 s NAME.marker (in the workspace of
      // session NAME, which the sandbox lets it write).
      const job = /slow job (\S+)/.exec(text);
      if (job) {
        const file = jobFile(job[1]!);
        return {
          toolCalls: [
            {
              name: "bash",
              arguments: JSON.stringify({
                command: `touch ${file}.started; sleep 3; touch ${file}.marker`,
              }),
            },
          ],
        };
      }
      return { content: `echo: ${text}` };
    });
  });
  /** `<session NAME's workspace>/NAME`. */
  const jobFile = (name: string) => join(home.home, "cli", "local", name, "scratch", name);
  afterAll(async () => {
    await llm.stop();
    home.cleanup();
  });

  const cases = [
    { signal: "SIGHUP", code: 129, interactive: false },
    { signal: "SIGTERM", code: 143, interactive: false },
    { signal: "SIGHUP", code: 129, interactive: true },
  ] as const;
  it.each(cases)(
    "$signal (interactive: $interactive) kills the tool's tree, saves the turn and exits $code",
    async ({ signal, code, interactive }) => {
      const name = `${signal}-${interactive ? "repl" : "once"}`;
      const prompt = `please run the slow job ${name}`;
      const chatArgs = interactive ? ["chat"] : ["chat", "-m", prompt];
      const child = spawn(process.execPath, [guppyBin, ...chatArgs, "--session", name], {
        env: cleanEnv({ ...llm.env("openai-completions"), GUPPY_HOME: home.home }),
        stdio: ["pipe", "pipe", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (d) => {
        stderr += d;
      });
      child.stdout.resume();
      if (interactive) child.stdin.write(`${prompt}\n`);
      const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
      const started = `${jobFile(name)}.started`;
      const deadline = Date.now() + 10_000;
      while (!existsSync(started) && Date.now() < deadline) await sleep(25);
      expect(existsSync(started)).toBe(true);
      await sleep(200); // the shell has gone on to `sleep 3`
      child.kill(signal);
      expect(await closed, stderr).toBe(code);
      // The command would have touched its marker 3 s after it started.
      await sleep(4000);
      expect(existsSync(`${jobFile(name)}.marker`)).toBe(false);
      // The aborted turn is in the context, as after Ctrl+C.
      const context = readFileSync(join(home.home, "cli", "local", name, "context.jsonl"), "utf8");
      expect(context).toContain(prompt);
    },
  );

  it("ends quietly with 0 when the reader of its output goes away (| head -1), not as a hangup", async () => {
    const child = spawn(process.execPath, [guppyBin, "chat", "--session", "piped"], {
      env: cleanEnv({ ...llm.env("openai-completions"), GUPPY_HOME: home.home }),
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    const closed = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.on("close", (code, signal) => resolve([code, signal])),
    );
    // The reader takes the first chunk (the banner) and goes away; the chat writes on.
    child.stdout.once("data", () => child.stdout.destroy());
    child.stdin.write("hello\n");
    await sleep(500);
    child.stdin.end("again\n");
    expect(await closed, stderr).toEqual([0, null]);
  });
});
