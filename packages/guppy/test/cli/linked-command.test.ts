import { execFileSync } from "node:child_process";
import { mkdtempSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanEnv } from "../helpers/run-cli.js";

const root = fileURLToPath(new URL("../../../../", import.meta.url));

/**
 * The README's install links the workspace's bin (`npm link -w guppy`): here into a throwaway
 * npm prefix, so the test never touches the machine's global folder.
 */
describe("a `guppy` command on PATH (npm link -w guppy)", () => {
  let prefix: string;
  let elsewhere: string;
  beforeAll(() => {
    prefix = mkdtempSync(join(tmpdir(), "guppy-prefix-"));
    elsewhere = mkdtempSync(join(tmpdir(), "guppy-elsewhere-"));
    execFileSync("npm", ["link", "-w", "guppy", "--no-audit", "--no-fund"], {
      cwd: root,
      env: { ...process.env, npm_config_prefix: prefix },
      stdio: "pipe",
    });
  }, 120_000);
  afterAll(() => {
    rmSync(prefix, { recursive: true, force: true });
    rmSync(elsewhere, { recursive: true, force: true });
  });

  it("runs from another directory by its name alone", () => {
    expect(readlinkSync(join(prefix, "bin", "guppy"))).toMatch(/guppy\/bin\/guppy\.js$/);
    const env = { ...cleanEnv(), PATH: `${join(prefix, "bin")}:${process.env.PATH}` };
    const run = (args: string[]) =>
      execFileSync("guppy", args, { cwd: elsewhere, env, encoding: "utf8" });
    expect(run(["--version"])).toMatch(/^guppy \d+\.\d+\.\d+\n$/);
    // A command that loads the whole CLI (the bundle), not only the --version shortcut.
    const home = join(elsewhere, "home");
    expect(run(["config", "--home", home])).toMatch(
      new RegExp(`^home +GUPPY_HOME +${home} +\\(flag\\)$`, "m"),
    );
  });
});
