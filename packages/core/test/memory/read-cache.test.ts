import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { listSubdirsFresh, readFileFresh } from "../../src/memory/read-cache.js";

describe("stat-checked reads of prompt sources", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "guppy-read-cache-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("reads a file again once it changed, even to the same size", () => {
    const path = join(dir, "MEMORY.md");
    expect(readFileFresh(path)).toBeUndefined();
    writeFileSync(path, "likes tea");
    expect(readFileFresh(path)).toBe("likes tea");
    writeFileSync(path, "likes rum");
    // Same size; a coarse clock could give the same mtime, so move it explicitly.
    utimesSync(path, new Date(Date.now() + 5_000), new Date(Date.now() + 5_000));
    expect(readFileFresh(path)).toBe("likes rum");
    rmSync(path);
    expect(readFileFresh(path)).toBeUndefined();
  });

  it("lists subfolders afresh when one is added or removed, skipping files and hidden ones", () => {
    const skills = join(dir, "skills");
    expect(listSubdirsFresh(skills)).toEqual([]);
    mkdirSync(join(skills, "weather"), { recursive: true });
    mkdirSync(join(skills, ".hidden"));
    writeFileSync(join(skills, "notes.txt"), "x");
    expect(listSubdirsFresh(skills)).toEqual(["weather"]);
    mkdirSync(join(skills, "alarm"));
    expect(listSubdirsFresh(skills)).toEqual(["alarm", "weather"]);
    rmSync(join(skills, "weather"), { recursive: true });
    expect(listSubdirsFresh(skills)).toEqual(["alarm"]);
  });
});
