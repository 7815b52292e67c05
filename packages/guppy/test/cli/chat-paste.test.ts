import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { lastMessage, type MockLlm, requestText, startEchoLlm } from "../helpers/mock-llm.js";
import { cleanEnv, runCli, tempHome } from "../helpers/run-cli.js";

const code = "please review this:\ndef f(x):\n    return x";

describe("pasting into guppy chat", () => {
  let llm: MockLlm;
  const home = tempHome();
  beforeAll(async () => {
    llm = await startEchoLlm();
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
    const r = await runCli(["chat", "--session", "bracketed"], {
      env: env(),
      input: {
        chunks: [
          "\x1b[200~please review this:\n",
          "/exit\n",
          "def f(x):\n    return x\n",
          "\x1b[201~",
          // A paste that ends inside a line: Enter sends it with what was typed after it.
          "\x1b[200~one\n",
          "  two\x1b[201~",
          " and three\n",
          "/exit\n",
        ],
      },
    });
    expect(r.code).toBe(0);
    expect(userMessages()).toEqual([
      "please review this:\n/exit\ndef f(x):\n    return x",
      "one\n  two and three",
    ]);
  });
});
