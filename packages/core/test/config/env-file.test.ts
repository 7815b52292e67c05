import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseEnvText, readEnvFile, setEnvFileValues } from "../../src/config/env-file.js";

describe("guppy.env", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "guppy-envfile-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("reads KEY=value lines, export, quotes and comments; names a bad line", () => {
    const r = parseEnvText(
      '# keys\nexport A=1\nB="two words \\" q"\nC=\'x y\'\nD=plain # note\n\nnot a line\nA=3\n',
    );
    expect(r.values).toEqual({ A: "3", B: 'two words " q', C: "x y", D: "plain" });
    expect(r.problems).toEqual(['guppy.env line 7: expected KEY=value, got "not a line"']);
    expect(readEnvFile(join(dir, "missing.env"))).toEqual({ values: {}, problems: [] });
  });

  it("sets values in place, keeps other lines, appends new ones, mode 600", () => {
    const path = join(dir, "guppy.env");
    writeFileSync(path, "# my keys\nOPENAI_API_KEY=old\nOTHER=1\n", { mode: 0o644 });
    setEnvFileValues(path, { OPENAI_API_KEY: "new", TELEGRAM_BOT_TOKEN: "12:ab cd" });
    expect(readFileSync(path, "utf8")).toBe(
      '# my keys\nOPENAI_API_KEY=new\nOTHER=1\nTELEGRAM_BOT_TOKEN="12:ab cd"\n',
    );
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readEnvFile(path).values.TELEGRAM_BOT_TOKEN).toBe("12:ab cd");
  });
});
