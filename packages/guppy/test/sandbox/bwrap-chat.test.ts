import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ToolCall } from "@copilotkit/aimock";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type MockLlm, startMockLlm } from "../helpers/mock-llm.js";
import { cleanEnv, runCli } from "../helpers/run-cli.js";
import {
  call,
  expectProbeConfined,
  probeCalls,
  type SandboxHome,
  sandboxHome,
  scenarioScript,
  sleep,
  systemPrompt,
  toolResults,
} from "./sandbox-fixture.js";

/**
 * `guppy chat -m` under GUPPY_SANDBOX=bwrap against aimock, with a fake HOME holding a secret and
 * GUPPY_HOME inside it: what the model's commands and file tools can reach, judged on what the
 * mock received back and on the host's files.
 */
describe("guppy chat -m under bubblewrap", () => {
  const scenarios = new Map<string, ToolCall[]>();
  let llm: MockLlm;
  let h: SandboxHome;
  const thread = (session: string) => ({
    workspace: join(h.home, "cli/local", session, "scratch"),
    channelMemory: join(h.home, "cli/local/MEMORY.md"),
  });
  const chat = (text: string, session: string, extra: Record<string, string> = {}) =>
    runCli(["chat", "-m", text, "--session", session], {
      env: cleanEnv({
        ...llm.env("openai-completions"),
        ...h.env,
        GUPPY_SANDBOX: "bwrap",
        ...extra,
      }),
      timeoutMs: 40_000,
    });

  beforeAll(async () => {
    llm = await startMockLlm(scenarioScript(scenarios));
    h = sandboxHome();
  });
  afterAll(async () => {
    await llm.stop();
    h.cleanup();
  });
  beforeEach(() => {
    llm.requests().length = 0;
  });

  it("keeps the home's secret, settings.json and api-token from the model; writes land only in the workspace and memory", async () => {
    const t = thread("probe");
    scenarios.set("probe", probeCalls(h, t));
    const r = await chat("scenario:probe", "probe");
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe("done");
    expectProbeConfined(h, t, llm.requests(), llm.rawBodies());

    // What the memory writes said is in the next run's system prompt: they persisted.
    llm.requests().length = 0;
    const next = await chat("hello again", "other");
    expect(next.code).toBe(0);
    const prompt = systemPrompt(llm.requests()[0]);
    expect(prompt).toContain("Ana drinks green tea.");
    expect(prompt).toContain("This channel plans the spring release.");
  }, 60_000);

  it("kills a timed-out command's grandchildren inside the sandbox too", async () => {
    const t = thread("timeout");
    const late = join(t.workspace, "late.txt");
    scenarios.set("timeout", [
      call("slow", "bash", {
        command: `(setsid sh -c 'sleep 3; echo late > ${late}' &) ; sleep 30`,
        timeout_seconds: 1,
      }),
    ]);
    const started = Date.now();
    const r = await chat("scenario:timeout", "timeout");
    expect(r.code).toBe(0);
    expect(Date.now() - started).toBeLessThan(20_000);
    const result = toolResults(llm.requests().at(-1)).get("slow");
    expect(result).toMatch(/timed out after 1 s/);
    // The grandchild left its session and process group; it would have written after 3 s.
    await sleep(4_000);
    expect(existsSync(late)).toBe(false);
  }, 40_000);

  it("lets commands reach the network by default, and not with GUPPY_SANDBOX_NETWORK=off", async () => {
    // The mock LLM listens on the host's loopback: reachable only with the host's network.
    const port = new URL(llm.url).port;
    const command = `exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected`;
    scenarios.set("net", [call("net", "bash", { command })]);
    const on = await chat("scenario:net", "net-on");
    expect(on.code).toBe(0);
    expect(toolResults(llm.requests().at(-1)).get("net")).toContain("connected");
    llm.requests().length = 0;
    const off = await chat("scenario:net", "net-off", { GUPPY_SANDBOX_NETWORK: "off" });
    expect(off.code).toBe(0);
    const result = toolResults(llm.requests().at(-1)).get("net");
    expect(result).not.toContain("connected");
    expect(result).toMatch(/\[exit code [1-9]/);
  });

  it("shows the folders GUPPY_SANDBOX_MOUNTS lists: read-only unless :rw", async () => {
    const projects = join(h.userHome, "projects");
    const shared = join(h.userHome, "shared");
    mkdirSync(projects);
    mkdirSync(shared);
    writeFileSync(join(projects, "plan.txt"), "the plan\n");
    scenarios.set("mounts", [
      call("ro_read", "bash", { command: `cat ${projects}/plan.txt` }),
      call("ro_write", "bash", { command: `echo no > ${projects}/new.txt` }),
      call("rw_write", "bash", { command: `echo yes > ${shared}/new.txt` }),
    ]);
    const r = await chat("scenario:mounts", "mounts", {
      GUPPY_SANDBOX_MOUNTS: `${projects},${shared}:rw`,
    });
    expect(r.code).toBe(0);
    const results = toolResults(llm.requests().at(-1));
    expect(results.get("ro_read")).toContain("the plan");
    expect(results.get("ro_write")).toMatch(/\[exit code [1-9]/);
    expect(existsSync(join(projects, "new.txt"))).toBe(false);
    expect(readFileSync(join(shared, "new.txt"), "utf8")).toBe("yes\n");
  });

  it("says in /status that the tools run in bubblewrap", async () => {
    const r = await runCli(["chat", "--session", "status"], {
      env: cleanEnv({ ...llm.env("openai-completions"), ...h.env, GUPPY_SANDBOX: "bwrap" }),
      input: "/status\n/exit\n",
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^sandbox\s+bubblewrap\b.*$/m);
  });

  it("under auto without bwrap, runs on the host and says so once at start and in /status", async () => {
    const emptyPath = mkdtempSync(join(tmpdir(), "guppy-no-bwrap-"));
    try {
      const r = await runCli(["chat", "--session", "auto"], {
        env: cleanEnv({ ...llm.env("openai-completions"), ...h.env, PATH: emptyPath }),
        input: "/status\n/exit\n",
      });
      expect(r.code).toBe(0);
      const notices = r.stderr.split("\n").filter((l) => /bwrap is not on PATH/.test(l));
      expect(notices).toHaveLength(1);
      expect(r.stdout).toMatch(/^sandbox\s+host\b/m);
    } finally {
      rmSync(emptyPath, { recursive: true, force: true });
    }
  });

  it("stops with one line, no stack trace, when GUPPY_SANDBOX=bwrap and bwrap is not on PATH", async () => {
    const emptyPath = mkdtempSync(join(tmpdir(), "guppy-no-bwrap-"));
    try {
      const r = await chat("hello", "nobwrap", { PATH: emptyPath });
      expect(r.code).not.toBe(0);
      expect(r.code).not.toBeNull();
      const lines = r.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/bwrap|bubblewrap/i);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(r.stdout).toBe("");
      // Nothing was asked of the model: it stopped at start, not after a fall back to the host.
      expect(llm.requests()).toHaveLength(0);
    } finally {
      rmSync(emptyPath, { recursive: true, force: true });
    }
  });
});
