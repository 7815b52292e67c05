import { loadConfig } from "@guppy/core";
import { describe, expect, it } from "vitest";
import { guppySettings } from "../../src/channels/registry.js";
import { UsageError } from "../../src/cli/cli-error.js";
import { parseCliArgs } from "../../src/cli/parse-cli-args.js";

/** The `debug` and `skillsInline` a command sees with these flags over GUPPY_DEBUG=1 and GUPPY_SKILLS_INLINE=true. */
function effective(argv: string[]) {
  const args = parseCliArgs(argv);
  const config = loadConfig({
    flags: args.configFlags,
    home: "/nonexistent/guppy-home",
    env: { GUPPY_DEBUG: "1", GUPPY_SKILLS_INLINE: "true" },
    settings: guppySettings,
  });
  return { debug: config.debug, skillsInline: config.skillsInline, sources: config.sources, args };
}

describe("boolean setting flags", () => {
  it.each([
    [["config", "--debug=false"], false],
    [["config", "--debug=0"], false],
    [["config", "--debug=no"], false],
    [["config", "--debug=off"], false],
    [["config", "--no-debug"], false],
    [["config", "--debug=true"], true],
    [["config", "--debug=yes"], true],
    [["config", "--debug"], true],
    [["config", "--debug", "--no-debug"], false],
    [["config", "--no-debug", "--debug"], true],
  ])("%j overrides GUPPY_DEBUG=1 with debug = %s", (argv, debug) => {
    const r = effective(argv);
    expect(r.debug).toBe(debug);
    expect(r.sources.debug).toBe("flag");
    expect(r.args.command).toBe("config");
    expect(r.args.positionals).toEqual([]);
  });

  it("turns off a setting the environment turned on, whatever the flag's place", () => {
    const r = effective(["--skills-inline=false", "skills", "--thread", "cli:local:x"]);
    expect(r.skillsInline).toBe(false);
    expect(r.debug).toBe(true);
    expect(r.args.command).toBe("skills");
    expect(r.args.thread).toBe("cli:local:x");
  });

  it("leaves a string option's value alone even when it looks like a flag", () => {
    const args = parseCliArgs(["chat", "--message=--no-debug"]);
    expect(args.message).toBe("--no-debug");
    expect(args.configFlags.debug).toBeUndefined();
    expect(parseCliArgs(["chat", "--", "--no-debug"]).positionals).toEqual(["--no-debug"]);
  });

  it("names a bad value of a boolean flag in one line", () => {
    expect(() => effective(["config", "--debug=maybe"])).toThrow(
      'Invalid command-line option --debug is "maybe": expected true or false',
    );
  });

  it.each([
    [["config", "--debug", "false"], '--debug takes its value after "=": write --debug=false'],
    [["chat", "--skills-inline", "1"], "write --skills-inline=1"],
    [["config", "--no-debug=true"], "--no-debug takes no value"],
  ])("refuses %j rather than dropping the value", (argv, message) => {
    expect(() => parseCliArgs(argv)).toThrow(UsageError);
    expect(() => parseCliArgs(argv)).toThrow(message);
  });
});

describe("each command's own flags", () => {
  it("gives a command its flags by name", () => {
    expect(parseCliArgs(["doctor", "--fix"]).flags).toEqual({ fix: true });
    expect(parseCliArgs(["usage", "--days", "7", "--by", "model", "--json"]).flags).toEqual({
      days: "7",
      by: "model",
      json: true,
    });
    expect(parseCliArgs(["pairing", "approve", "telegram", "C", "--owner"]).owner).toBe(true);
  });

  it("suggests the closest flag the command takes for an unknown one", () => {
    expect(() => parseCliArgs(["chat", "--modle", "openai/gpt-4o"])).toThrow(
      "Unknown option '--modle'. Did you mean --model? (see guppy --help)",
    );
    expect(() => parseCliArgs(["chat", "--workspce", "/tmp"])).toThrow("Did you mean --workspace?");
    expect(() => parseCliArgs(["usage", "--dasy", "3"])).toThrow("Did you mean --days?");
    expect(() => parseCliArgs(["config", "--no-debgu"])).toThrow("Did you mean --no-debug?");
    expect(() => parseCliArgs(["chat", "--frobnicate"])).toThrow(
      /^Unknown option '--frobnicate'\. To specify a positional .* \(see guppy --help\)$/,
    );
    // Only the command's own flags are offered: --fx is not taken for doctor's --fix in a chat.
    expect(() => parseCliArgs(["chat", "--fx"])).toThrow(/^Unknown option '--fx'\. To specify/);
    expect(() => parseCliArgs(["doctor", "--fx"])).toThrow("Did you mean --fix?");
    // Another command's flag: whose it is, not a guess.
    expect(() => parseCliArgs(["chat", "--fix"])).toThrow(
      "Unknown option '--fix'. --fix is an option of guppy doctor, not of guppy chat. (see guppy --help)",
    );
  });

  it("refuses another command's flag as parseArgs' unknown option", () => {
    expect(() => parseCliArgs(["chat", "--fix"])).toThrow("Unknown option '--fix'");
    expect(() => parseCliArgs(["config", "--owner"])).toThrow("Unknown option '--owner'");
    expect(() => parseCliArgs(["chat", "--schedule", "x"])).toThrow("Unknown option '--schedule'");
  });
});
