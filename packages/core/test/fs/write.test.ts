import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { overwriteInPlace, writeFileAtomic } from "../../src/fs/write.js";
import { fakeFullDisk } from "../helpers/full-disk.js";

describe("writeFileAtomic", () => {
  let dir: string;
  let disk: ReturnType<typeof fakeFullDisk>;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "guppy-atomic-"));
    disk = fakeFullDisk();
  });
  afterEach(() => {
    disk.restore();
    rmSync(dir, { recursive: true, force: true });
  });

  it("writes the whole content when each write takes only part of it", () => {
    const path = join(dir, "f.jsonl");
    const content = `{"text":"${"é".repeat(20)}"}\n`;
    disk.chunk = 7; // short writes, with room left: the rest follows, split mid-character
    writeFileAtomic(path, content);
    expect(readFileSync(path, "utf8")).toBe(content);
    expect(disk.writes).toBe(Math.ceil(Buffer.byteLength(content) / 7));
  });

  it("keeps the old file, and no temp file, when the disk cannot take the new one", () => {
    const path = join(dir, "inbox.jsonl");
    writeFileSync(path, '{"old":true}\n');
    disk.free = 16; // part of the new content fits, the rest does not
    expect(() => writeFileAtomic(path, `${JSON.stringify({ new: "x".repeat(100) })}\n`)).toThrow(
      `Could not write ${path}: no space left on device (ENOSPC)`,
    );
    expect(readFileSync(path, "utf8")).toBe('{"old":true}\n');
    expect(readdirSync(dir)).toEqual(["inbox.jsonl"]);
  });
});

describe("overwriteInPlace", () => {
  let dir: string;
  let disk: ReturnType<typeof fakeFullDisk>;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "guppy-overwrite-"));
    disk = fakeFullDisk();
  });
  afterEach(() => {
    disk.restore();
    rmSync(dir, { recursive: true, force: true });
  });

  it("writes all of the new content when each write takes only part of it", () => {
    const path = join(dir, "log-cursor");
    writeFileSync(path, `${"9".repeat(40)}\n`);
    const line = `${"12 34567".padStart(31, " ")}\n`;
    disk.chunk = 10; // short writes with room left
    overwriteInPlace(path, line);
    expect(readFileSync(path, "utf8")).toBe(line);
  });

  it("fails with the file's name when the disk is full, not with a shorter content", () => {
    const path = join(dir, "status.json");
    disk.free = 4;
    expect(() => overwriteInPlace(path, '{"messages":12}\n')).toThrow(
      `Could not write ${path}: no space left on device (ENOSPC)`,
    );
  });
});
