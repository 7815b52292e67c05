import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { writeFileAtomic } from "../../src/store/atomic-write.js";
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
