import { afterAll, describe, expect, it } from "vitest";
import { cleanEnv, runCli, tempHome } from "../helpers/run-cli.js";

describe("secrets given as flags", () => {
  const home = tempHome();
  afterAll(() => home.cleanup());
  const env = cleanEnv({ GUPPY_HOME: home.home });

  it("are warned about once, in one line that points to guppy.env", async () => {
    const result = await runCli(
      ["config", "--api-key", "test-key-0123456789abcdef", "--api-token", "tok-abcdefghijkl"],
      { env },
    );
    expect(result.code).toBe(0);
    const warnings = result.stderr.split("\n").filter((l) => l.includes("(ps)"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /^guppy: warning: --api-key, --api-token can be read by anyone on this machine \(ps\) while guppy runs: set GUPPY_API_KEY, GUPPY_API_TOKEN as KEY=value lines in .*guppy\.env \(chmod 600; every guppy command reads it, a running gateway follows it\), in the environment, or in settings\.json instead\.$/,
    );
    // The warning names the flags, never their values.
    expect(result.stderr).not.toContain("test-key-0123456789abcdef");
  });

  it("are not warned about when they come from the environment", async () => {
    const result = await runCli(["config"], {
      env: { ...env, GUPPY_API_KEY: "test-key-0123456789abcdef" },
    });
    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain("(ps)");
  });
});
