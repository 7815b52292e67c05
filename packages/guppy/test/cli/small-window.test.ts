import { MIN_CONTEXT_WINDOW } from "@guppy/core/config";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { lastMessage, type MockLlm, requestText, startMockLlm } from "../helpers/mock-llm.js";
import { cleanEnv, runCli, tempHome } from "../helpers/run-cli.js";

/** Settings that leave a prompt no room are refused at start; the smallest accepted window works. */
describe("guppy chat in a small context window", () => {
  let llm: MockLlm;
  const home = tempHome();
  const env = (extra: Record<string, string>) =>
    cleanEnv({ ...llm.env("openai-completions"), GUPPY_HOME: home.home, ...extra });

  beforeAll(async () => {
    llm = await startMockLlm((request) => ({
      content: `You said: ${requestText({ ...request, messages: [lastMessage(request)!] })}`,
    }));
  });
  afterAll(async () => {
    await llm.stop();
    home.cleanup();
  });
  afterEach(() => {
    llm.requests().length = 0;
  });

  it("answers at the smallest window with the largest reply limit it allows, turn after turn", async () => {
    const settings = {
      GUPPY_CONTEXT_WINDOW: String(MIN_CONTEXT_WINDOW),
      GUPPY_MAX_TOKENS: String(MIN_CONTEXT_WINDOW / 2),
    };
    for (const text of ["hello there", "and once more", "a third time"]) {
      const r = await runCli(["chat", "-m", text, "--session", "small"], { env: env(settings) });
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`You said: ${text}\n`);
    }
    expect(llm.requests()).toHaveLength(3);
    const body = llm.rawBodies()[0] as { max_completion_tokens?: number };
    expect(body.max_completion_tokens).toBe(MIN_CONTEXT_WINDOW / 2);
  });

  it.each([
    [
      { GUPPY_CONTEXT_WINDOW: String(MIN_CONTEXT_WINDOW - 1) },
      `guppy: Invalid environment variable GUPPY_CONTEXT_WINDOW is "${MIN_CONTEXT_WINDOW - 1}": expected an integer ≥ ${MIN_CONTEXT_WINDOW}.\n`,
    ],
    [
      { GUPPY_CONTEXT_WINDOW: "8192", GUPPY_MAX_TOKENS: "4097" },
      "guppy: GUPPY_MAX_TOKENS=4097 leaves too little of the 8192-token context window (GUPPY_CONTEXT_WINDOW=8192) for the prompt: the reply limit may be at most half the window, 4096.\n",
    ],
  ])("refuses %j at start with one line, without calling the model", async (settings, line) => {
    const r = await runCli(["chat", "-m", "hi", "--session", "refused"], { env: env(settings) });
    expect(r.stderr).toBe(line);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(llm.requests()).toHaveLength(0);
  });
});
