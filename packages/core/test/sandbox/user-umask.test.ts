import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeFilesPrivate, userUmask } from "../../src/fs/private-files.js";
import { createSandbox } from "../../src/sandbox/sandbox.js";

const bwrapWorks =
  spawnSync("bwrap", ["--ro-bind", "/", "/", "--unshare-pid", "true"], { stdio: "ignore" })
    .status === 0;

// Runs in its own process (vitest's forks pool), so the umask it sets is its own.
describe("the tools' commands run under the user's umask, guppy under 077", () => {
  let before: number;
  let home: string;
  beforeAll(() => {
    before = process.umask(0o027);
    makeFilesPrivate();
    home = mkdtempSync(join(tmpdir(), "guppy-umask-"));
  });
  afterAll(() => {
    process.umask(before);
    rmSync(home, { recursive: true, force: true });
  });

  it("keeps the umask it replaced", () => {
    expect(process.umask()).toBe(0o077);
    expect(userUmask()).toBe(0o027);
  });

  for (const type of ["host", "bwrap"] as const) {
    it.skipIf(type === "bwrap" && !bwrapWorks)(
      `${type}: a command sees 0027 and makes 640 files`,
      async () => {
        const config = type === "host" ? { type } : { type, mounts: [], network: false };
        const sandbox = createSandbox(config, { home, threadId: "cli:local:umask" });
        const cwd = join(home, "cli", "local", "umask", "scratch");
        mkdirSync(cwd, { recursive: true });
        const result = await sandbox.exec(`umask; echo x > made-${type}.txt`, {
          cwd,
          timeoutMs: 20_000,
        });
        expect(result.output.trim()).toBe("0027");
        expect(result.exitCode).toBe(0);
        expect(statSync(join(cwd, `made-${type}.txt`)).mode & 0o777).toBe(0o640);
        // guppy's own file, beside it: 600.
        writeFileSync(join(cwd, `guppy-${type}.txt`), "x");
        expect(statSync(join(cwd, `guppy-${type}.txt`)).mode & 0o777).toBe(0o600);
      },
    );
  }
});
