import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanEnv, runCli, tempHome } from "../helpers/run-cli.js";

/** Mistakes in how guppy is called: one line on stderr, exit 2, nothing done. */
describe("guppy usage errors", () => {
  const home = tempHome();
  // A model that is never asked: every case here stops before any request.
  const env = cleanEnv({
    GUPPY_HOME: home.home,
    GUPPY_MODEL: "openai/never-asked",
    GUPPY_BASE_URL: "http://127.0.0.1:9/v1",
  });
  afterAll(() => home.cleanup());

  it.each([
    [
      ["chat", "hello", "world"],
      'guppy chat takes no arguments (got "hello world"); to send one prompt use -m "TEXT"',
    ],
    [["config", "extra", "words"], 'guppy config takes no arguments (got "extra words")'],
    [["init", "extra"], 'guppy init takes no arguments (got "extra")'],
    [["serve", "now"], 'guppy serve takes no arguments (got "now")'],
    [["skills", "x"], 'guppy skills takes no arguments (got "x"); use --thread'],
    [
      ["invite", "create", "slack", "extra"],
      'unexpected argument "extra" (usage: guppy invite create <channel> [--owner])',
    ],
    [
      ["pairing", "list", "telegram", "a", "b"],
      'unexpected arguments "a b" (usage: guppy pairing list <channel>)',
    ],
    [
      ["pairing", "approve", "telegram", "ABCD2345", "x"],
      'unexpected argument "x" (usage: guppy pairing approve <channel> <code> [--owner])',
    ],
    [
      ["pairing", "role", "telegram", "42", "guest", "x"],
      'unexpected argument "x" (usage: guppy pairing role <channel> <user> owner|guest)',
    ],
  ])("guppy %j refuses the extra words", async (args, message) => {
    const r = await runCli(args, { env });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr.split("\n")).toEqual([expect.stringContaining(`guppy: ${message}`), ""]);
    // Nothing was created: not the init files, not an invite, not a session.
    expect(existsSync(join(home.home, "settings.json"))).toBe(false);
    expect(existsSync(join(home.home, "access"))).toBe(false);
    expect(existsSync(join(home.home, "cli"))).toBe(false);
  });

  it("refuses an empty -m before looking for a model (none is configured here)", async () => {
    const r = await runCli(["chat", "-m", " "], { env: cleanEnv({ GUPPY_HOME: home.home }) });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("guppy: -m needs a non-empty message.\n");
  });

  it.each([["chat", "-m", "hi"], ["skills"]])(
    "guppy %s refuses a --session name that is not a terminal session's",
    async (...args) => {
      const r = await runCli([...args, "--session", "bad name"], { env });
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toBe(
        'guppy: invalid --session "bad name": use 1-64 letters, digits, ".", "_" or "-".\n',
      );
    },
  );

  describe("a data directory that is a file", () => {
    const file = join(home.home, "not-a-dir");
    beforeAll(() => writeFileSync(file, "keep me"));

    it.each([
      ["init"],
      ["chat", "-m", "hi"],
      ["chat"],
      ["config"],
      ["skills"],
      ["invite", "create", "telegram"],
    ])("guppy %s names it in one line", async (...args) => {
      const direct = await runCli([...args, "--home", file], { env });
      expect(direct.code).toBe(2);
      expect(direct.stderr).toBe(`guppy: --home ${file} is not a directory\n`);
      const below = await runCli(args, { env: { ...env, GUPPY_HOME: join(file, "guppy") } });
      expect(below.code).toBe(2);
      expect(below.stderr).toBe(
        `guppy: GUPPY_HOME ${join(file, "guppy")} cannot be created: ${file} is not a directory\n`,
      );
      expect(readFileSync(file, "utf8")).toBe("keep me");
    });
  });
});
