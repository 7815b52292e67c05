import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createHostSandbox, type ExecResult } from "../../src/sandbox/host-sandbox.js";
import { killRunningTrees } from "../../src/sandbox/running-trees.js";
import { isAlive, waitDead } from "../helpers/process-state.js";

/** Runs `command` in the host sandbox and waits until it printed `count` pids ("pid N"). */
async function startCommand(cwd: string, command: string, count: number) {
  let output = "";
  const result = createHostSandbox().exec(command, {
    cwd,
    timeoutMs: 60_000,
    onOutput: (chunk) => {
      output += chunk;
    },
  });
  const t0 = Date.now();
  while ([...output.matchAll(/pid (\d+)/g)].length < count) {
    if (Date.now() - t0 > 10_000) throw new Error(`no pids printed: ${output}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const pids = [...output.matchAll(/pid (\d+)/g)].map((m) => Number(m[1]));
  return { pids, result };
}

describe.runIf(existsSync("/proc/self/stat"))("running tool commands", () => {
  let dir: string;
  const results: Array<Promise<ExecResult>> = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "guppy-trees-"));
  });
  afterEach(async () => {
    killRunningTrees();
    await Promise.all(results.splice(0));
    rmSync(dir, { recursive: true, force: true });
  });

  it("kills every running command's tree at once, a process that left its group too", async () => {
    // The shell, a background child, and one that left the process group (setsid).
    const { pids, result } = await startCommand(
      dir,
      "echo pid $$; sleep 30 & echo pid $!; setsid sleep 31 & echo pid $!; wait",
      3,
    );
    results.push(result);
    for (const pid of pids) expect(isAlive(pid)).toBe(true);
    expect(killRunningTrees()).toBe(1);
    for (const pid of pids) expect(await waitDead(pid)).toBe(true);
    expect((await result).signal).toBe("SIGKILL");
    expect(killRunningTrees()).toBe(0); // nothing left to kill
  });
});
