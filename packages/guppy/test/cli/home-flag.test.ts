import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { cleanEnv, runCli, tempHome } from "../helpers/run-cli.js";

describe("--home", () => {
  let cwd: string;
  const home = tempHome();
  beforeEach(() => {
    cwd = mkdtempSync(join(tmpdir(), "guppy-cwd-"));
  });
  afterEach(() => rmSync(cwd, { recursive: true, force: true }));
  afterAll(() => home.cleanup());

  it.each([["init"], ["config"], ["chat", "-m", "hi"]])(
    "an empty value is refused in one line and nothing is written (guppy %s)",
    async (...command) => {
      const r = await runCli([...command, "--home", ""], {
        cwd,
        env: cleanEnv({ GUPPY_HOME: home.home }),
      });
      expect(r.stderr).toBe(
        'guppy: Invalid command-line option --home is "": expected a directory path.\n',
      );
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(readdirSync(cwd)).toEqual([]);
    },
  );

  it("a given value is reported as coming from the flag, even with GUPPY_HOME set", async () => {
    const r = await runCli(["config", "--home", join(cwd, "g")], {
      env: cleanEnv({ GUPPY_HOME: home.home }),
    });
    expect(r.code).toBe(0);
    expect(r.stdout.split("\n")[0]).toMatch(
      new RegExp(`^home +GUPPY_HOME +${join(cwd, "g")} +\\(flag\\)$`),
    );
  });
});
