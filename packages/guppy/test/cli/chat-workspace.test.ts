import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ToolCall } from "@copilotkit/aimock";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type MockLlm, startMockLlm } from "../helpers/mock-llm.js";
import { cleanEnv, runCli, tempHome } from "../helpers/run-cli.js";
import { call, scenarioScript, toolResults } from "../sandbox/sandbox-fixture.js";
import { startServe } from "../serve/serve-harness.js";

/**
 * `guppy chat --workspace DIR`: the tools work in DIR (bash starts there, writes land there),
 * on the host and under bubblewrap (DIR bound read-write), and the banner names it.
 */
describe("guppy chat --workspace", () => {
  const scenarios = new Map<string, ToolCall[]>();
  let llm: MockLlm;
  const home = tempHome();
  let dir: string;
  const ownWorkspace = (session: string) => join(home.home, "cli/local", session, "scratch");
  const env = (sandbox: string) =>
    cleanEnv({ ...llm.env("openai-completions"), GUPPY_HOME: home.home, GUPPY_SANDBOX: sandbox });

  beforeAll(async () => {
    llm = await startMockLlm(scenarioScript(scenarios));
    scenarios.set("write", [
      call("pwd", "bash", { command: "pwd" }),
      call("echo", "bash", { command: "echo made-by-bash > made.txt" }),
      call("write", "write", { path: "written.txt", content: "made-by-write\n" }),
    ]);
  });
  afterAll(async () => {
    await llm.stop();
    home.cleanup();
  });
  beforeEach(() => {
    llm.requests().length = 0;
    dir = mkdtempSync(join(tmpdir(), "guppy-workspace-"));
    return () => rmSync(dir, { recursive: true, force: true });
  });

  it.each(["host", "bwrap"])(
    "with GUPPY_SANDBOX=%s, bash and the file tools work in DIR",
    async (sandbox) => {
      const session = `write-${sandbox}`;
      const r = await runCli(
        ["chat", "-m", "scenario:write", "--session", session, "--workspace", dir],
        {
          env: env(sandbox),
          timeoutMs: 40_000,
        },
      );
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(r.stdout).toBe("done\n");
      const results = toolResults(llm.requests().at(-1));
      expect(results.get("pwd")?.split("\n")[0]).toBe(dir);
      expect(readFileSync(join(dir, "made.txt"), "utf8")).toBe("made-by-bash\n");
      expect(readFileSync(join(dir, "written.txt"), "utf8")).toBe("made-by-write\n");
      expect(existsSync(join(ownWorkspace(session), "made.txt"))).toBe(false);
      // The model is told where it works.
      const system = llm.requests()[0]?.messages.find((m) => m.role === "system");
      expect(JSON.stringify(system?.content)).toContain(dir);
    },
    60_000,
  );

  it("takes DIR relative to where guppy was started", async () => {
    mkdirSync(join(dir, "project"));
    const r = await runCli(
      ["chat", "-m", "scenario:write", "--session", "relative", "--workspace", "project"],
      {
        env: env("host"),
        cwd: dir,
      },
    );
    expect(r.code).toBe(0);
    expect(readFileSync(join(dir, "project", "made.txt"), "utf8")).toBe("made-by-bash\n");
  });

  it("names the workspace in the banner: DIR, or the thread's own", async () => {
    const given = await runCli(["chat", "--session", "banner", "--workspace", dir], {
      env: env("host"),
      input: "/exit\n",
    });
    expect(given.code).toBe(0);
    expect(given.stdout.split("\n")[1]).toBe(`workspace ${dir}`);
    const own = await runCli(["chat", "--session", "banner"], {
      env: env("host"),
      input: "/exit\n",
    });
    expect(own.stdout.split("\n")[1]).toBe(`workspace ${ownWorkspace("banner")}`);
  });

  it("refuses --workspace in one line when a gateway runs the home's threads", async () => {
    const gatewayHome = tempHome();
    const s = await startServe(gatewayHome.home, llm.env("openai-completions"));
    try {
      const r = await runCli(["chat", "-m", "hi", "--workspace", dir], {
        env: cleanEnv({ ...llm.env("openai-completions"), GUPPY_HOME: gatewayHome.home }),
      });
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(
        `guppy: --workspace needs the chat to run its thread itself, but guppy serve (pid ${s.child.pid}) runs the threads of ${gatewayHome.home}: stop it, or chat without --workspace\n`,
      );
      expect(llm.requests()).toHaveLength(0);
    } finally {
      s.child.kill("SIGTERM");
      await s.exited;
      gatewayHome.cleanup();
    }
  }, 60_000);

  it("refuses a DIR that is missing or not a directory in one line, before any request", async () => {
    const missing = join(dir, "nope");
    const r = await runCli(["chat", "-m", "hi", "--workspace", missing], { env: env("host") });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `guppy: --workspace ${missing}: there is no such directory (${missing})\n`,
    );
    const file = join(dir, "file.txt");
    writeFileSync(file, "x");
    const f = await runCli(["chat", "-m", "hi", "--workspace", file], { env: env("host") });
    expect(f.code).toBe(2);
    expect(f.stderr).toBe(`guppy: --workspace ${file}: ${file} is not a directory\n`);
    expect(llm.requests()).toHaveLength(0);
  });
});
