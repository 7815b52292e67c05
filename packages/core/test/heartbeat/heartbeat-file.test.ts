import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  HEARTBEAT_FILE,
  heartbeatPrompt,
  isActionable,
  readHeartbeatFile,
} from "../../src/heartbeat/heartbeat-file.js";
import { isHeartbeatOk } from "../../src/runner/quiet-run.js";

describe("HEARTBEAT.md: what asks for a run", () => {
  it.each([
    ["empty", ""],
    ["blank lines", "\n  \n\t\n"],
    ["a comment", "<!-- add checks here -->"],
    ["a comment over several lines", "<!--\n- check mail\n- water plants\n-->\n"],
    ["an unclosed comment", "# Heartbeat\n<!-- - check mail\n- water plants"],
    ["headings only", "# Heartbeat\n\n## Morning\n### \n#"],
    ["a template of empty items", "# Checks\n- \n* [ ]\n1.\n- [ ]\n<!-- e.g. check the build -->"],
  ])("is not actionable: %s", (_name, text) => {
    expect(isActionable(text)).toBe(false);
  });

  it.each([
    ["one line", "Check whether the build on main is green."],
    ["an item under a heading", "# Heartbeat\n- water the plants on Fridays"],
    ["text after a comment", "<!-- note -->\nremind me of the dentist"],
    ["a checkbox with text", "- [ ] call mum"],
    ["a hashtag, not a heading", "#todo look at the inbox"],
  ])("is actionable: %s", (_name, text) => {
    expect(isActionable(text)).toBe(true);
  });

  describe("readHeartbeatFile", () => {
    let home: string;
    beforeEach(() => {
      home = mkdtempSync(join(tmpdir(), "guppy-hbfile-"));
    });
    afterEach(() => rmSync(home, { recursive: true, force: true }));

    it("gives nothing for a missing or comment-only file, the text for an actionable one", () => {
      expect(readHeartbeatFile(home)).toBeUndefined();
      writeFileSync(join(home, HEARTBEAT_FILE), "# Heartbeat\n<!-- nothing yet -->\n");
      expect(readHeartbeatFile(home)).toBeUndefined();
      writeFileSync(join(home, HEARTBEAT_FILE), "# Heartbeat\n- check the build\n");
      expect(readHeartbeatFile(home)).toBe("# Heartbeat\n- check the build");
    });
  });

  it("puts the file's text in the prompt and says how to answer when nothing needs the user", () => {
    const prompt = heartbeatPrompt("- check the build");
    expect(prompt).toContain("- check the build");
    expect(prompt).toContain("answer exactly HEARTBEAT_OK");
  });

  it.each([
    ["HEARTBEAT_OK", true],
    ["  HEARTBEAT_OK\n", true],
    ["HEARTBEAT_OK.", true],
    ["**HEARTBEAT_OK**", true],
    ["`HEARTBEAT_OK`!", true],
    ["HEARTBEAT_OK, but the build is red", false],
    ["The build is red. HEARTBEAT_OK", false],
    ["", false],
    ["heartbeat ok", false],
  ])("isHeartbeatOk(%j) is %s", (answer, quiet) => {
    expect(isHeartbeatOk(answer)).toBe(quiet);
  });
});
