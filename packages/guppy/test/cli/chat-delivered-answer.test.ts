import type { ChatCompletionRequest, FixtureResponse } from "@copilotkit/aimock";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { lastMessage, type MockLlm, requestText, startMockLlm } from "../helpers/mock-llm.js";
import { cleanEnv, runCli, tempHome } from "../helpers/run-cli.js";
import { type ServeProcess, startServe, stopServes } from "../serve/serve-harness.js";

/**
 * The model's script. "progress N": send_message "Half way there N" to this conversation, then
 * the same text as the final answer (the run delivered it already). "note N": send_message
 * "Noted N", then a different answer "Final N" (both are shown).
 */
function script(request: ChatCompletionRequest): FixtureResponse {
  const users = request.messages.filter((m) => m.role === "user");
  const prompt = requestText({ ...request, messages: users.slice(-1) });
  const send = (text: string) => ({
    toolCalls: [{ name: "send_message", arguments: JSON.stringify({ text }) }],
  });
  const progress = /progress (\S+)/.exec(prompt);
  const note = /note (\S+)/.exec(prompt);
  if (lastMessage(request)?.role === "tool") {
    if (progress) return { content: `Half way there ${progress[1]}` };
    if (note) return { content: `Final ${note[1]}` };
    return { content: "tool done" };
  }
  if (progress) return send(`Half way there ${progress[1]}`);
  if (note) return send(`Noted ${note[1]}`);
  return { content: `You said: ${prompt}` };
}

const count = (text: string, part: string) => text.split(part).length - 1;

/**
 * A run that posts its answer with send_message and ends with the same text shows it once in
 * `guppy chat` — in-process and attached to a running gateway — as a channel posts it once.
 */
describe("guppy chat shows an answer the run delivered with send_message once", () => {
  let llm: MockLlm;
  const homes: Array<ReturnType<typeof tempHome>> = [];
  const running: ServeProcess[] = [];
  const newHome = () => {
    const h = tempHome();
    homes.push(h);
    return h.home;
  };
  const env = (home: string) => cleanEnv({ ...llm.env("openai-completions"), GUPPY_HOME: home });

  beforeAll(async () => {
    llm = await startMockLlm((request) => script(request));
  });
  afterEach(async () => {
    await stopServes(running, "SIGTERM");
  });
  afterAll(async () => {
    await llm.stop();
    for (const h of homes) h.cleanup();
  });

  /** One prompt in an interactive chat (one per chat: lines typed together are one prompt). */
  const repl = async (home: string, prompt: string) => {
    const r = await runCli(["chat"], {
      env: env(home),
      input: `${prompt}\n/exit\n`,
      timeoutMs: 60_000,
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    return r.stdout;
  };

  const expectShownOnce = async (home: string) => {
    const progress = await repl(home, "progress p1");
    // The tool ran (its line) and the message was shown: once, though the answer repeats it.
    expect(progress).toContain("▸ send_message");
    expect(count(progress, "Half way there p1")).toBe(1);
    // A message and a different answer: both shown, each once, in that order.
    const note = await repl(home, "note n1");
    expect(count(note, "Noted n1")).toBe(1);
    expect(count(note, "Final n1")).toBe(1);
    expect(note.indexOf("Noted n1")).toBeLessThan(note.indexOf("Final n1"));

    // One-shot: the answer alone on stdout, once.
    const once = await runCli(["chat", "-m", "progress p2"], {
      env: env(home),
      timeoutMs: 60_000,
    });
    expect(once.code).toBe(0);
    expect(once.stdout).toBe("Half way there p2\n");
  };

  it("in process", { timeout: 90_000 }, async () => {
    await expectShownOnce(newHome());
  });

  it("attached to guppy serve", { timeout: 90_000 }, async () => {
    const home = newHome();
    const s = await startServe(home, llm.env("openai-completions"));
    running.push(s);
    await expectShownOnce(home);
    // The gateway ran the thread: its log holds the delivered answer once.
    const r = await s.api("/v1/threads/cli:local:default/messages");
    const { messages } = (await r.json()) as { messages: Array<{ text: string }> };
    expect(messages.filter((m) => m.text === "Half way there p1")).toHaveLength(1);
  });
});
