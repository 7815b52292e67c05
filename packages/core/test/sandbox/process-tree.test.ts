import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ExecResult } from "../../src/sandbox/exec.js";
import {
  execOnHost,
  type HostContainment,
  hostContainment,
} from "../../src/sandbox/host-sandbox.js";
import {
  killLeftoverTrees,
  killRunningTrees,
  recordRunningTrees,
} from "../../src/sandbox/process-tree.js";
import {
  isAlive,
  pidsWith,
  uniqueMarker,
  waitNoneWith,
  waitRunning,
} from "../helpers/process-state.js";

const contained = hostContainment();
const plain: HostContainment = { kind: "none", why: "test" };
/** Both ways a host command runs: in a PID namespace of its own where one can be had, and not. */
const ways: Array<[string, HostContainment]> = [
  ...(contained.kind === "pid-namespace"
    ? [["in a PID namespace", contained] as [string, HostContainment]]
    : []),
  ["as a plain child", plain],
];

/**
 * Runs `command` on the host and waits until a process holding each of `markers` runs; every
 * process of the command holds `marker` in its arguments (the shell and unshare too).
 */
async function startCommand(
  cwd: string,
  containment: HostContainment,
  command: string,
  markers: readonly string[],
) {
  const result = execOnHost(command, { cwd, timeoutMs: 60_000 }, undefined, undefined, containment);
  await waitRunning(markers);
  return { result };
}

describe.runIf(existsSync("/proc/self/stat")).each(ways)(
  "running tool commands %s",
  (_, containment) => {
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
      const m = uniqueMarker();
      const command = `sleep 30.${m} & setsid sleep 31.${m} & wait`;
      const { result } = await startCommand(dir, containment, command, [
        `sleep 30.${m}`,
        `sleep 31.${m}`,
      ]);
      results.push(result);
      expect(pidsWith(m).length).toBeGreaterThanOrEqual(3);
      expect(killRunningTrees()).toBe(1);
      expect(await waitNoneWith(m)).toBe(true);
      expect((await result).signal).toBe("SIGKILL");
      expect(killRunningTrees()).toBe(0); // nothing left to kill
    });

    it("records running commands, and a later process kills what is left of them — only that", async () => {
      const record = join(dir, "running-tools.jsonl");
      recordRunningTrees(record);
      await execOnHost("true", { cwd: dir, timeoutMs: 10_000 }, undefined, undefined, containment);
      expect(readFileSync(record, "utf8")).toBe(""); // it ended: no longer listed

      // In a PID namespace, a process that left the group and cleared its environment (no tag)
      // goes too; as a plain child only the group, the descendants and the tagged are found.
      const m = uniqueMarker();
      const escapes = containment.kind === "pid-namespace";
      const escapee = escapes ? `setsid env -i sh -c 'sleep 32.${m}; true' & ` : "";
      const command = `sleep 30.${m} & setsid sleep 31.${m} & ${escapee}wait`;
      const markers = [`sleep 30.${m}`, `sleep 31.${m}`, ...(escapes ? [`sleep 32.${m}`] : [])];
      const { result } = await startCommand(dir, containment, command, markers);
      results.push(result);
      const listed = readFileSync(record, "utf8");
      expect(listed.trim().split("\n")).toHaveLength(1);
      expect(pidsWith(m)).toContain(JSON.parse(listed).pid);

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
      expect(await waitNoneWith(m)).toBe(true);
      expect(isAlive(other.pid as number)).toBe(true);
      expect(killLeftoverTrees(join(dir, "missing.jsonl"))).toBe(0);
    });
  },
);
