import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  createLogFileWriter,
  createTurnBatchedWriter,
} from "../../src/gateway/turn-batched-writer.js";

const turn = () => new Promise((r) => setImmediate(r));
const dirs: string[] = [];
/** A new temp directory (removed after the test) and `gateway.log`'s path in it or in `sub`. */
const tempLog = (sub?: string) => {
  const dir = mkdtempSync(join(tmpdir(), "guppy-tbw-"));
  dirs.push(dir);
  if (sub) mkdirSync(join(dir, sub));
  return { dir, path: join(dir, sub ?? "", "gateway.log") };
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("turn-batched writer", () => {
  it("writes a turn's text in one call, in order, and what is pending at once on flushSync", async () => {
    const calls: string[] = [];
    const writer = createTurnBatchedWriter((text) => calls.push(text));
    writer.write("a\n");
    writer.write("b\n");
    expect(calls).toEqual([]);
    await turn();
    expect(calls).toEqual(["a\nb\n"]);
    writer.write("c\n");
    writer.flushSync();
    expect(calls).toEqual(["a\nb\n", "c\n"]);
    await turn();
    expect(calls).toHaveLength(2); // nothing was left for the scheduled write
  });

  it("appends to its file, creating it", async () => {
    const { path } = tempLog();
    const errors: unknown[] = [];
    const writer = createLogFileWriter(path, (e) => errors.push(e));
    writer.write("one\n");
    await turn();
    writer.write("two\n");
    writer.flushSync();
    expect(readFileSync(path, "utf8")).toBe("one\ntwo\n");
    expect(errors).toEqual([]);
  });

  it("follows its path when the file is moved away or removed, its directory too", async () => {
    const { dir, path } = tempLog("logs");
    const errors: unknown[] = [];
    const writer = createLogFileWriter(path, (e) => errors.push(e), { checkEveryMs: 0 });
    writer.write("one\n");
    writer.flushSync();
    renameSync(path, `${path}.1`); // logrotate
    writer.write("two\n");
    writer.flushSync();
    expect(readFileSync(`${path}.1`, "utf8")).toBe("one\n");
    expect(readFileSync(path, "utf8")).toBe("two\n");
    rmSync(join(dir, "logs"), { recursive: true }); // cleared by hand
    writer.write("three\n");
    writer.flushSync();
    expect(readFileSync(path, "utf8")).toBe("three\n");
    expect(errors).toEqual([]);
  });

  it("looks at its path at most once per interval", async () => {
    const { path } = tempLog();
    const writer = createLogFileWriter(path, () => {}, { checkEveryMs: 60_000 });
    renameSync(path, `${path}.1`);
    writer.write("still the open file\n");
    writer.flushSync();
    expect(readFileSync(`${path}.1`, "utf8")).toBe("still the open file\n");
    expect(existsSync(path)).toBe(false);
  });

  it.runIf(existsSync("/dev/full"))("reports a failing write once and keeps going", async () => {
    const errors: unknown[] = [];
    const writer = createLogFileWriter("/dev/full", (e) => errors.push(e));
    writer.write("lost\n");
    await turn();
    writer.write("lost too\n");
    await turn();
    expect(errors).toHaveLength(1);
    expect(String(errors[0])).toMatch(/ENOSPC/);
  });
});
