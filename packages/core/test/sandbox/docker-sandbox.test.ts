import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { killRunningTrees } from "../../src/sandbox/process-tree.js";
import { createSandbox, withAgentPaths } from "../../src/sandbox/sandbox.js";
import { sandboxPathPolicy } from "../../src/sandbox/thread-view.js";
import type { SandboxConfig } from "../../src/sandbox/types.js";
import { createReadTool } from "../../src/tools/read-tool.js";
import type { ToolContext } from "../../src/tools/tool-context.js";
import { createWriteTool } from "../../src/tools/write-tool.js";
import { standIn, THREAD } from "./docker-stand-in.js";

describe("the docker sandbox (stand-in docker)", () => {
  let fx: ReturnType<typeof standIn>;
  const config: SandboxConfig = { type: "docker", container: "guppy-box" };
  beforeEach(() => {
    fx = standIn();
  });
  afterEach(() => {
    killRunningTrees();
    rmSync(fx.root, { recursive: true, force: true });
  });

  it("runs each command with docker exec in its thread's folder under /workspace", async () => {
    const sandbox = createSandbox(config, { home: fx.home, threadId: THREAD });
    const result = await sandbox.exec('echo hi; pwd; echo "[$GUPPY_HOME]"', {
      cwd: fx.workspace,
      timeoutMs: 10_000,
      env: { ...fx.env, GUPPY_HOME: fx.home },
    });
    expect(result.exitCode).toBe(0);
    expect(result.output).toBe(`hi\n${fx.workspace}\n[]\n`);
    const [call] = fx.calls();
    const agentCwd = "/workspace/telegram/42/default/scratch";
    expect(call?.slice(0, 4)).toEqual(["exec", "-w", agentCwd, "-e"]);
    expect(call?.[4]).toMatch(/^GUPPY_EXEC_TAG=[0-9a-f-]{36}$/);
    expect(call?.slice(5)).toEqual([
      "guppy-box",
      "bash",
      "-c",
      'echo hi; pwd; echo "[$GUPPY_HOME]"',
    ]);
    expect(sandbox.toAgentPath(fx.workspace)).toBe(agentCwd);
    expect(sandbox.toHostPath?.(`${agentCwd}/a.txt`)).toBe(join(fx.workspace, "a.txt"));
  });

  it("on timeout kills the command inside the container too, by its tag", async () => {
    const sandbox = createSandbox(config, { home: fx.home, threadId: THREAD });
    const result = await sandbox.exec("sleep 30", {
      cwd: fx.workspace,
      timeoutMs: 500,
      env: fx.env,
    });
    expect(result.timedOut).toBe(true);
    const tag = fx.calls()[0]?.[4];
    const deadline = Date.now() + 5000;
    let kill: string[] | undefined;
    while (!kill && Date.now() < deadline) {
      kill = fx.calls().find((c) => c[0] === "exec" && c[2] === "sh");
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(kill?.slice(0, 4)).toEqual(["exec", "guppy-box", "sh", "-c"]);
    expect(kill?.[4]).toContain(tag);
    expect(kill?.[4]).toContain("kill -9");
  });

  it("lets the file tools take /workspace paths and shows /workspace paths in their results", async () => {
    const sandbox = createSandbox(config, { home: fx.home, threadId: THREAD });
    const ctx: ToolContext = {
      workspaceDir: fx.workspace,
      artifactsDir: () => join(fx.root, "artifacts"),
      sandbox,
      toolResultMaxChars: 10_000,
      bashTimeoutSeconds: 120,
      pathPolicy: sandboxPathPolicy(config, fx.home, THREAD),
    };
    const [write, read] = withAgentPaths([createWriteTool(ctx), createReadTool(ctx)], sandbox);
    const agentPath = "/workspace/telegram/42/default/scratch/notes.txt";
    const wrote = await write!.execute("1", { path: agentPath, content: "hello" });
    expect(readFileSync(join(fx.workspace, "notes.txt"), "utf8")).toBe("hello");
    expect(wrote.content[0]).toEqual({ type: "text", text: `Wrote 5 bytes to ${agentPath}.` });
    const got = await read!.execute("2", { path: agentPath });
    expect(JSON.stringify(got.content)).toContain("hello");
    writeFileSync(join(fx.home, "settings.json"), "{}");
    const refused = read!.execute("3", { path: "/workspace/settings.json" });
    await expect(refused).rejects.toThrow(/\/workspace\/settings\.json is refused/);
    await expect(refused).rejects.not.toThrow(fx.home);
  });
});
