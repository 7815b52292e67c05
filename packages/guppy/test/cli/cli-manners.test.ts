import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { commandHelp } from "../../src/cli/help-text.js";
import { commands } from "../../src/cli/main.js";
import { lastMessage, type MockLlm, requestText, startEchoLlm } from "../helpers/mock-llm.js";
import { cleanEnv, runCli, tempHome } from "../helpers/run-cli.js";
import { runPty } from "../helpers/run-pty.js";

describe("guppy <command> --help", () => {
  it.each(Object.keys(commands))("%s has its own usage, and --help prints it", async (name) => {
    const own = commandHelp[name];
    expect(own, `commandHelp has no entry for "${name}"`).toBeDefined();
    expect(own).toContain(`guppy ${name}`);
    const r = await runCli([name, "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(own);
    // Its own usage, not every command's.
    const other = Object.keys(commandHelp).find((c) => c !== name && !own?.includes(`guppy ${c}`));
    if (other) expect(r.stdout).not.toContain(commandHelp[other]);
  });
});

describe("did you mean", () => {
  it("a mistyped command", async () => {
    const r = await runCli(["chta"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'guppy: unknown command "chta" — did you mean "chat"? (see guppy --help)\n',
    );
  });

  it("a mistyped flag", async () => {
    const r = await runCli(["chat", "--modle", "openai/gpt-4o", "-m", "hi"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      "guppy: Unknown option '--modle'. Did you mean --model? (see guppy --help)\n",
    );
  });

  it("a model id not in the catalog, in one line", async () => {
    const home = tempHome();
    try {
      const r = await runCli(["chat", "-m", "hi", "--model", "openai/gpt-4o-mnii"], {
        env: cleanEnv({ GUPPY_HOME: home.home, OPENAI_API_KEY: "sk-test" }),
      });
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/did you mean "openai\/gpt-4o-mini"\?/);
      expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
    } finally {
      home.cleanup();
    }
  });
});

describe("exit and quit at the chat prompt", () => {
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

  it.each(["exit", "quit", "  exit  "])(
    "piped %j leaves, after the prompt before it",
    async (word) => {
      const r = await runCli(["chat", "--session", `piped-${word.trim()}`], {
        env: env(),
        input: `hi\n${word}\nnever sent\n`,
      });
      expect(r.code).toBe(0);
      expect(userMessages()).toEqual(["hi"]);
      expect(r.stdout).toContain("echo: hi");
    },
  );

  it("typed in a terminal, exit leaves", async () => {
    const pty = runPty(["chat", "--session", "pty-exit"], env());
    await pty.waitFor(/› /);
    pty.type("hello\r");
    await pty.waitFor(/echo: hello/);
    pty.type("exit\r");
    expect(await pty.exited()).toBe(0);
    expect(userMessages()).toEqual(["hello"]);
  });

  it("/compact reports once, in words that fit what it did", async () => {
    const count = (text: string, part: string) => text.split(part).length - 1;
    const short = await runCli(["chat", "--session", "compact-none"], {
      env: env(),
      input: "/compact\n/exit\n",
    });
    expect(short.code).toBe(0);
    expect(count(short.stdout, "Nothing to compact yet: the conversation fits")).toBe(1);

    const some = { ...env(), GUPPY_COMPACT_KEEP_TOKENS: "0" };
    for (const text of ["one", "two"]) {
      expect(
        (await runCli(["chat", "--session", "compact-some", "-m", text], { env: some })).code,
      ).toBe(0);
    }
    const r = await runCli(["chat", "--session", "compact-some"], {
      env: some,
      input: "/compact\n/exit\n",
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Summarised \d+ older messages/);
    expect(count(r.stdout, "Summarised")).toBe(1);
    expect(r.stdout).not.toContain("context compacted");
  });

  it("exit inside a longer prompt is part of it", async () => {
    const r = await runCli(["chat", "--session", "inside"], {
      env: env(),
      input: { chunks: ["\x1b[200~run this:\nexit\n\x1b[201~", "/exit\n"] },
    });
    expect(r.code).toBe(0);
    expect(userMessages()).toEqual(["run this:\nexit"]);
  });
});
