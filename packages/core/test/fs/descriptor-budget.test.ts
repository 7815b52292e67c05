import { execFileSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  appendFileBound,
  connectionBudget,
  openFilesLimit,
  retryOnDescriptorShortage,
} from "../../src/fs/descriptor-budget.js";
import { appendLines, forgetAppendState, openForAppendAsync } from "../../src/fs/durable-append.js";

const limits = (soft: string, hard: string) =>
  `Limit                     Soft Limit           Hard Limit           Units     \nMax open files            ${soft}                 ${hard}                 files     \n`;

describe("connectionBudget (the HTTP API's share of the open-files limit)", () => {
  it("leaves the append files half and a reserve, and refuses past it", () => {
    expect(openFilesLimit(limits("300", "300"))).toBe(300);
    expect(appendFileBound(300)).toBe(150);
    const small = connectionBudget(300);
    expect(small.admit).toBe(300 - 150 - 96);
    expect(small.shed).toBeGreaterThan(small.admit);
    // The refused ones' room comes out of the reserve, never the append files'.
    expect(small.shed + appendFileBound(300)).toBeLessThan(300);
    expect(connectionBudget(1_048_576).admit).toBe(1_048_576 - 8192 - 96);
    expect(connectionBudget(100).admit).toBe(16);
  });

  it("is unbounded when the limit is unknown or unlimited", () => {
    expect(connectionBudget(undefined).admit).toBe(Number.POSITIVE_INFINITY);
    expect(connectionBudget(openFilesLimit(limits("unlimited", "unlimited"))).admit).toBe(
      Number.POSITIVE_INFINITY,
    );
  });
});

/** util-linux's prlimit can lower this process's own limit (and raise it back to the hard one). */
const hasPrlimit = (() => {
  try {
    execFileSync("prlimit", ["--version"], { stdio: "ignore" });
    return process.platform === "linux";
  } catch {
    return false;
  }
})();

describe.skipIf(!hasPrlimit)("opening files when the process is out of descriptors", () => {
  let dir: string;
  let restore: string;
  const fillers: number[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "guppy-emfile-"));
    const line = /^Max open files\s+(\S+)\s+(\S+)/m.exec(readFileSync("/proc/self/limits", "utf8"));
    restore = `--nofile=${line?.[1]}:${line?.[2]}`;
  });
  afterEach(() => {
    for (const fd of fillers.splice(0)) closeSync(fd);
    execFileSync("prlimit", ["--pid", String(process.pid), restore]);
    rmSync(dir, { recursive: true, force: true });
  });

  /** Lowers the soft limit a little above what is open, then opens files until EMFILE. */
  const exhaust = () => {
    const open = readdirSync("/proc/self/fd").length;
    execFileSync("prlimit", ["--pid", String(process.pid), `--nofile=${open + 16}:`]);
    for (;;) {
      try {
        fillers.push(openSync("/dev/null", "r"));
      } catch (error) {
        expect((error as NodeJS.ErrnoException).code).toBe("EMFILE");
        return;
      }
    }
  };

  it("an accepted thread's files wait for a descriptor instead of failing", async () => {
    const path = join(dir, "log.jsonl");
    exhaust();
    let settled: string | undefined;
    const opened = openForAppendAsync(path).then(
      () => {
        settled = "opened";
      },
      (error: NodeJS.ErrnoException) => {
        settled = error.code ?? String(error);
      },
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Still waiting: no descriptor came back yet.
    expect(settled).toBeUndefined();
    for (const fd of fillers.splice(0, 4)) closeSync(fd);
    await opened;
    expect(settled).toBe("opened");
    appendLines(path, [{ n: 1 }]);
    expect(readFileSync(path, "utf8")).toBe('{"n":1}\n');
    forgetAppendState(path);
  });

  it("an append that meets EMFILE closes the least recently used append files and goes on", () => {
    const old = join(dir, "old.jsonl");
    appendLines(old, [{ n: 0 }]);
    exhaust();
    const fresh = join(dir, "fresh.jsonl");
    appendLines(fresh, [{ n: 1 }]);
    for (const fd of fillers.splice(0)) closeSync(fd);
    expect(readFileSync(fresh, "utf8")).toBe('{"n":1}\n');
    forgetAppendState(fresh);
  });

  it("gives up after its wait with the EMFILE itself", async () => {
    exhaust();
    await expect(
      retryOnDescriptorShortage(
        () =>
          new Promise<number>((resolve, reject) => {
            try {
              resolve(openSync("/dev/null", "r"));
            } catch (error) {
              reject(error);
            }
          }),
        { waitMs: 200 },
      ),
    ).rejects.toMatchObject({ code: "EMFILE" });
  });
});
