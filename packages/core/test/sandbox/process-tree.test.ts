import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ExecResult } from "../../src/sandbox/exec.js";
import {
  killLeftoverTrees,
  killRunningTrees,
  recordRunningTrees,
} from "../../src/sandbox/process-tree.js";
import { createSandbox } from "../../src/sandbox/sandbox.js";
import { isAlive, waitDead } from "../helpers/process-state.js";

/** Runs `command` in the host sandbox and waits until it printed `count` pids ("pid N"). */
async function startCommand(cwd: string, command: string, count: number) {
  let output = "";
  const result = createSandbox({ type: "host" }).exec(command, {
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
  const strays: ChildProcess[] = [];
  const results: Array<Promise<ExecResult>> = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "guppy-trees-"));
  });
  afterEach(async () => {
    recordRunningTrees(undefined);
    killRunningTrees();
    for (const child of strays.splice(0)) child.kill("SIGKILL");
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

  it("records running commands, and a later process kills what is left of them — only that", async () => {
    const record = join(dir, "running-tools.jsonl");
    recordRunningTrees(record);
    const done = createSandbox({ type: "host" }).exec("true", { cwd: dir, timeoutMs: 10_000 });
    await done;
    expect(readFileSync(record, "utf8")).toBe(""); // it ended: no longer listed

    const { pids, result } = await startCommand(
      dir,
      "echo pid $$; sleep 30 & echo pid $!; setsid sleep 31 & echo pid $!; wait",
      3,
    );
    results.push(result);
    const listed = readFileSync(record, "utf8");
    expect(listed.trim().split("\n")).toHaveLength(1);
    expect(JSON.parse(listed)).toMatchObject({ pid: pids[0] });

    // What a guppy killed with SIGKILL leaves: the list as it was, its commands running. Beside
    // them, a line whose pid now belongs to another process (reused) and whose tag nobody has.
    recordRunningTrees(undefined);
    const other = spawn("sleep", ["30"], { stdio: "ignore" });
    strays.push(other);
    const reused = {
      ...JSON.parse(listed),
      pid: other.pid,
      tag: "GUPPY_EXEC_TAG=00000000-0000-4000-8000-000000000000",
    };
    const previous = join(dir, "previous.jsonl");
    writeFileSync(previous, `${listed}${JSON.stringify(reused)}\n{"pid":1,"tag":""}\n{"torn`);

    expect(killLeftoverTrees(previous)).toBe(1);
    for (const pid of pids) expect(await waitDead(pid)).toBe(true);
    expect(isAlive(other.pid as number)).toBe(true);
    expect(killLeftoverTrees(join(dir, "missing.jsonl"))).toBe(0);
  });
});
