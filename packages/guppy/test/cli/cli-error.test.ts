import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ExitCode, reportError } from "../../src/cli/cli-error.js";
import { parseCliArgs } from "../../src/cli/parse-cli-args.js";
import { tempHome } from "../helpers/run-cli.js";

describe("reportError", () => {
  let home: ReturnType<typeof tempHome>;
  let written: string[];
  beforeEach(() => {
    home = tempHome();
    vi.stubEnv("GUPPY_HOME", home.home);
    vi.stubEnv("GUPPY_DEBUG", undefined);
    written = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
  });
  afterEach(() => {
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
    home.cleanup();
  });

  const report = (argv: string[]) => {
    const error = new Error("the disk caught fire");
    const code = reportError(error, parseCliArgs(argv));
    return { code, text: written.join(""), stack: error.stack ?? "" };
  };

  it.each(["false", "0", "no", "off", " "])(
    "prints one line and no stack trace with GUPPY_DEBUG=%j",
    (value) => {
      vi.stubEnv("GUPPY_DEBUG", value);
      const r = report(["chat"]);
      expect(r.code).toBe(ExitCode.failed);
      expect(r.text).toBe("guppy: the disk caught fire\n");
    },
  );

  it("prints no stack trace when --no-debug or --debug=false overrides GUPPY_DEBUG=1", () => {
    vi.stubEnv("GUPPY_DEBUG", "1");
    expect(report(["chat", "--no-debug"]).text).toBe("guppy: the disk caught fire\n");
    written.length = 0;
    expect(report(["chat", "--debug=false"]).text).toBe("guppy: the disk caught fire\n");
  });

  it("adds the stack trace when debug is on, from GUPPY_DEBUG, --debug or settings.json", () => {
    vi.stubEnv("GUPPY_DEBUG", "1");
    const fromEnv = report(["chat"]);
    expect(fromEnv.text).toBe(`guppy: the disk caught fire\n${fromEnv.stack}\n`);
    vi.stubEnv("GUPPY_DEBUG", undefined);
    written.length = 0;
    const fromFlag = report(["chat", "--debug"]);
    expect(fromFlag.text).toBe(`guppy: the disk caught fire\n${fromFlag.stack}\n`);
    writeFileSync(join(home.home, "settings.json"), '{ "debug": true }');
    written.length = 0;
    const fromFile = report(["chat"]);
    expect(fromFile.text).toBe(`guppy: the disk caught fire\n${fromFile.stack}\n`);
  });
});
