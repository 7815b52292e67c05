import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MockLlm, startMockLlm } from "../helpers/mock-llm.js";
import { cleanEnv, runCli, tempHome } from "../helpers/run-cli.js";
import { runPty } from "../helpers/run-pty.js";

const ANSWER = "# Plan\n\nSome **bold** and `code`:\n\n- first\n- second\n\n```sh\nnpm test\n```";

/** An answer's Markdown: rendered on a terminal with colour, byte for byte anywhere else. */
describe("Markdown answers in guppy chat", () => {
  let llm: MockLlm;
  const home = tempHome();
  beforeAll(async () => {
    llm = await startMockLlm(() => ({ content: ANSWER }));
  });
  afterAll(async () => {
    await llm.stop();
    home.cleanup();
  });
  /** The environment with colour allowed (run-cli's cleanEnv sets NO_COLOR). */
  const env = (color: boolean) => {
    const e = cleanEnv({ ...llm.env("openai-completions"), GUPPY_HOME: home.home });
    if (color) delete e.NO_COLOR;
    return e;
  };

  it("chat -m piped prints the answer byte for byte, colour allowed or not", async () => {
    for (const color of [true, false]) {
      const r = await runCli(["chat", "-m", "plan it", "--session", `piped-${color}`], {
        env: env(color),
      });
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`${ANSWER}\n`);
    }
  });

  it("the interactive chat with piped output shows the answer as written", async () => {
    const r = await runCli(["chat", "--session", "piped-repl"], {
      env: env(true),
      input: "plan it\n/exit\n",
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(ANSWER);
    expect(r.stdout).not.toContain("\x1b[");
  });

  it("on a terminal, chat -m renders it: bold, a bullet list, the heading without its #", async () => {
    const pty = runPty(["chat", "-m", "plan it", "--session", "pty-once"], env(true));
    expect(await pty.exited()).toBe(0);
    const out = pty.output();
    expect(out).toContain("\x1b[1m\x1b[4mPlan\x1b[24m\x1b[22m");
    expect(out).toContain("\x1b[1mbold\x1b[22m");
    expect(out).toContain("\x1b[2m•\x1b[22m first");
    expect(out).toContain("  \x1b[33mnpm test\x1b[39m");
    expect(out).not.toContain("**bold**");
  });

  it("on a terminal, the interactive chat redraws the streamed answer rendered", async () => {
    const pty = runPty(["chat", "--session", "pty-repl"], env(true));
    await pty.waitFor(/› /);
    pty.type("plan it\r");
    // "npm test" in the code block's colour (ESC [33m … ESC [39m): the answer was redrawn.
    await pty.waitFor(/npm test.\[39m/);
    pty.type("/exit\r");
    expect(await pty.exited()).toBe(0);
    expect(pty.output()).toContain("\x1b[1mbold\x1b[22m");
  });

  it("on a terminal with NO_COLOR, the answer stays as written", async () => {
    const pty = runPty(["chat", "-m", "plan it", "--session", "pty-nocolor"], env(false));
    expect(await pty.exited()).toBe(0);
    // The terminal turns line ends into CRLF.
    expect(pty.output().replace(/\r\n/g, "\n")).toContain(ANSWER);
  });
});
