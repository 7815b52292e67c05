import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ToolCall } from "@copilotkit/aimock";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type MockLlm, startMockLlm } from "../helpers/mock-llm.js";
import { cleanEnv, runCli } from "../helpers/run-cli.js";
import { type ServeProcess, startServe, threadMessages, waitFor } from "../serve/serve-harness.js";
import {
  call,
  expectProbeConfined,
  probeCalls,
  type SandboxHome,
  sandboxHome,
  scenarioScript,
  sleep,
  toolResults,
} from "./sandbox-fixture.js";

/**
 * `guppy serve` under GUPPY_SANDBOX=bwrap, driven through its HTTP API, against aimock: the same
 * probe as `guppy chat -m`, from a thread of the API (which acts as owner).
 */
describe("guppy serve under bubblewrap", () => {
  const scenarios = new Map<string, ToolCall[]>();
  let llm: MockLlm;
  let h: SandboxHome;
  let serve: ServeProcess | undefined;
  const thread = (name: string) => ({
    id: `http:api:${name}`,
    workspace: join(h.home, "http/api", name, "scratch"),
    channelMemory: join(h.home, "http/api/MEMORY.md"),
  });
  const env = (extra: Record<string, string> = {}) => ({
    ...llm.env("openai-completions"),
    ...h.env,
    GUPPY_SANDBOX: "bwrap",
    ...extra,
  });
  /** Posts `text` to the thread and waits for the answer in its log. */
  const converse = async (s: ServeProcess, threadId: string, text: string) => {
    const posted = await s.api(`/v1/threads/${threadId}/messages`, {
      method: "POST",
      body: JSON.stringify({ text }),
    });
    expect(posted.status).toBe(202);
    return waitFor(
      async () => (await threadMessages(s, threadId)).findLast((m) => m.is_bot),
      30_000,
      `the answer in ${threadId}`,
    );
  };

  beforeAll(async () => {
    llm = await startMockLlm(scenarioScript(scenarios));
    h = sandboxHome();
    serve = await startServe(h.home, env());
  });
  afterEach(() => {
    llm.requests().length = 0;
  });
  afterAll(async () => {
    if (serve && serve.child.exitCode === null && serve.child.signalCode === null) {
      serve.child.kill("SIGKILL");
      await serve.exited;
    }
    await llm.stop();
    h.cleanup();
  });

  it("keeps the home's secret, settings.json and api-token from the model; writes land only in the workspace and memory", async () => {
    const s = serve as ServeProcess;
    const t = thread("probe");
    scenarios.set("probe", probeCalls(h, t));
    const answer = await converse(s, t.id, "scenario:probe");
    expect(answer.text).toBe("done");
    expectProbeConfined(h, t, llm.requests(), llm.rawBodies());
  }, 60_000);

  it("kills a timed-out command's grandchildren inside the sandbox too", async () => {
    const s = serve as ServeProcess;
    const t = thread("timeout");
    const late = join(t.workspace, "late.txt");
    scenarios.set("timeout", [
      call("slow", "bash", {
        command: `(setsid sh -c 'sleep 3; echo late > ${late}' &) ; sleep 30`,
        timeout_seconds: 1,
      }),
    ]);
    await converse(s, t.id, "scenario:timeout");
    expect(toolResults(llm.requests().at(-1)).get("slow")).toMatch(/timed out after 1 s/);
    await sleep(4_000);
    expect(existsSync(late)).toBe(false);
  }, 40_000);

  it("says in GET …/status, and in an attached guppy chat's /status, that the tools run in bubblewrap", async () => {
    const s = serve as ServeProcess;
    const r = await s.api(`/v1/threads/${thread("probe").id}/status`);
    expect(r.status).toBe(200);
    const status = (await r.json()) as { sandbox?: unknown };
    expect(status.sandbox).toEqual(expect.stringMatching(/^bubblewrap\b/));
    // A guppy chat attached to this gateway shows it in its /status too.
    const attached = await runCli(["chat"], {
      env: cleanEnv({ ...llm.env("openai-completions"), ...h.env }),
      input: "/status\n/exit\n",
    });
    expect(attached.code).toBe(0);
    expect(attached.stdout).toMatch(/^sandbox\s+bubblewrap\b/m);
  });

  it("stops with one line, no stack trace, when GUPPY_SANDBOX=bwrap and bwrap is not on PATH", async () => {
    const emptyPath = mkdtempSync(join(tmpdir(), "guppy-no-bwrap-"));
    const other = sandboxHome();
    try {
      const r = await runCli(["serve"], {
        env: cleanEnv({ ...env(other.env), GUPPY_HTTP_PORT: "0", PATH: emptyPath }),
        timeoutMs: 15_000,
      });
      expect(r.code).not.toBe(0);
      expect(r.code).not.toBeNull();
      const lines = r.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/bwrap|bubblewrap/i);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(r.stdout).not.toMatch(/guppy serve ready/);
    } finally {
      other.cleanup();
      rmSync(emptyPath, { recursive: true, force: true });
    }
  });
});
