import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ChatCompletionRequest } from "@copilotkit/aimock";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pidsWith, uniqueMarker, waitNoneWith } from "../../../core/test/helpers/process-state.js";
import { cleanEnv, guppyBin, runCli, tempHome } from "../helpers/run-cli.js";
import {
  type AsyncMockLlm,
  contentText,
  startAsyncMockLlm,
  waitFor,
} from "../serve/serve-harness.js";

/**
 * A `guppy chat` killed with SIGKILL mid-run loses nothing: its prompt is in the session's inbox
 * journal, and the next chat on the session handles it as the gateway's replay does — run again
 * when no tool had run, else reported as interrupted (the tool commands it left killed).
 */
describe("guppy chat killed mid-run (kill -9), no gateway", () => {
  let llm: AsyncMockLlm;
  const home = tempHome();
  // The tool's sleep, found by its argument (see pidsWith).
  const sleeper = `60.${uniqueMarker()}`;
  /** "hang" prompts are answered only after the first one was seen (the chat is killed then). */
  let hangs = 0;
  beforeAll(async () => {
    llm = await startAsyncMockLlm(async (request: ChatCompletionRequest) => {
      const last = request.messages[request.messages.length - 1];
      if (last?.role === "tool") return { content: "tool finished" };
      const text = contentText(last?.content);
      if (text.includes("long job")) {
        const command = `sleep ${sleeper} & wait`;
        return { toolCalls: [{ name: "bash", arguments: JSON.stringify({ command }) }] };
      }
      if (text.includes("hang") && hangs++ === 0) await new Promise(() => {});
      return { content: `echo: ${text}` };
    });
  });
  afterAll(async () => {
    await llm.stop();
    home.cleanup();
  });
  // The host sandbox, where the tool command's tree is guppy's own to kill (and record).
  const env = () => cleanEnv({ ...llm.env(), GUPPY_HOME: home.home, GUPPY_SANDBOX: "host" });
  const killMidRun = async (args: string[], running: () => boolean) => {
    const child = spawn(process.execPath, [guppyBin, ...args], {
      env: env(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    const closed = new Promise((resolve) => child.on("close", resolve));
    await waitFor(() => (running() ? true : undefined), 10_000, "the run under way");
    child.kill("SIGKILL");
    await closed;
  };
  const sent = (text: string) =>
    llm.requests.filter((r) => r.messages.some((m) => contentText(m.content) === text)).length;

  it("a prompt killed before any tool ran is run again at the next start; the new one is answered after it", async () => {
    await killMidRun(
      ["chat", "-m", "please hang", "--session", "rerun"],
      () => sent("please hang") > 0,
    );
    // Accepted on disk in the session's own journal, before the model was asked.
    const journal = join(home.home, "cli", "local", "rerun", "chat-inbox.jsonl");
    expect(readFileSync(journal, "utf8")).toContain('"text":"please hang"');
    expect(existsSync(join(home.home, "inbox.jsonl"))).toBe(false);
    const next = await runCli(["chat", "-m", "and now", "--session", "rerun"], { env: env() });
    expect(next.stderr).toBe("");
    // Everything answered at its exit: nothing left there to replay.
    expect(existsSync(journal)).toBe(false);
    expect(next.code).toBe(0);
    expect(next.stdout).toBe("echo: and now\n");
    const log = readFileSync(join(home.home, "cli", "local", "rerun", "log.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { text: string; isBot: boolean });
    expect(log.map((e) => e.text)).toEqual([
      "please hang",
      "echo: please hang",
      "and now",
      "echo: and now",
    ]);
  });

  it("a prompt killed while its tool ran is reported as interrupted, its tool command killed, at the next start", async () => {
    const running = () => pidsWith(`sleep ${sleeper}`, { whole: true }).length > 0;
    await killMidRun(["chat", "-m", "start the long job", "--session", "tools"], running);
    expect(running()).toBe(true);
    const next = await runCli(["chat", "-m", "are you there", "--session", "tools"], {
      env: env(),
    });
    expect(next.code).toBe(0);
    expect(next.stdout).toBe("echo: are you there\n");
    expect(next.stderr).toContain("Killed 1 tool command(s) left running by a guppy chat");
    expect(next.stderr).toMatch(
      /\nguppy: guppy stopped while working on your message "start the long job" .* It had already run: bash /,
    );
    expect(await waitNoneWith(sleeper)).toBe(true);
    // Not run again; the model sees the interrupted exchange and what was said of it.
    expect(sent("start the long job")).toBe(1);
    const last = llm.requests.at(-1);
    const texts = last?.messages.map((m) => contentText(m.content)).join("\n") ?? "";
    expect(texts).toContain("start the long job");
    expect(texts).toContain("guppy stopped while working on your message");
  });
});
