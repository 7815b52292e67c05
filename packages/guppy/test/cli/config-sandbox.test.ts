import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "@guppy/core";
import { afterAll, describe, expect, it } from "vitest";
import { sandboxLines } from "../../src/commands/config-sandbox.js";
import { cleanEnv, runCli, tempHome } from "../helpers/run-cli.js";

/** `guppy config` says where the tools run: the sandbox as a start would resolve it. */
describe("guppy config and the sandbox", () => {
  const home = tempHome();
  /** A PATH with no bwrap on it. */
  const noBwrap = mkdtempSync(join(tmpdir(), "guppy-no-bwrap-"));
  afterAll(() => {
    home.cleanup();
    rmSync(noBwrap, { recursive: true, force: true });
  });
  const lines = (env: Record<string, string>) => {
    const full = cleanEnv({ GUPPY_HOME: home.home, ...env });
    return sandboxLines(loadConfig({ env: full }), full);
  };

  it("names bubblewrap when GUPPY_SANDBOX=bwrap can run", () => {
    expect(lines({ GUPPY_SANDBOX: "bwrap" })).toEqual([
      expect.stringMatching(/^sandbox: bubblewrap\b/),
    ]);
  });

  it("names the host when GUPPY_SANDBOX=host, and whether a command's whole tree ends with it", () => {
    expect(lines({ GUPPY_SANDBOX: "host" })).toEqual([
      expect.stringMatching(/^sandbox: host\b.*process trees? (is|are not) contained/),
    ]);
  });

  it("prints auto's fall back to the host with the reason, when bwrap is not on PATH", () => {
    const [first, ...rest] = lines({ PATH: noBwrap });
    expect(first).toMatch(/^sandbox: host\b/);
    expect(rest).toEqual([expect.stringMatching(/bwrap is not on PATH/)]);
  });

  it("prints the start-up error as the line, not a failure, when bwrap cannot work", () => {
    expect(lines({ GUPPY_SANDBOX: "bwrap", PATH: noBwrap })).toEqual([
      expect.stringMatching(/^sandbox: GUPPY_SANDBOX is bwrap but bwrap is not on PATH/),
    ]);
  });

  it("prints the line after the settings table, and exits 0 even when the sandbox cannot work", async () => {
    const dir = tempHome();
    try {
      writeFileSync(join(dir.home, "settings.json"), '{ "sandbox": "bwrap" }\n');
      const r = await runCli(["config"], {
        env: cleanEnv({ GUPPY_HOME: dir.home, PATH: noBwrap }),
      });
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      const out = r.stdout.trim().split("\n");
      const at = out.findIndex((line) => line.startsWith("sandbox:"));
      expect(out[at]).toMatch(/^sandbox: .*bwrap is not on PATH/);
      // Named where it was set: settings.json, not the environment.
      expect(out[at]).toContain(join(dir.home, "settings.json"));
      // Right after the settings table.
      expect(out[at - 1]).toMatch(/\((default|settings|env|flag|unset)\)$/);
    } finally {
      dir.cleanup();
    }
  });
});
