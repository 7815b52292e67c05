import { mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  listSubdirsFresh,
  onlyCommentsAndSpace,
  readFileFresh,
  readTextFile,
} from "../../src/memory/read-text-file.js";

/** What the file reader meant all along: strip closed comments, and nothing is left but space. */
const reference = (text: string) => text.replace(/<!--[\s\S]*?-->/g, "").trim() === "";

describe("onlyCommentsAndSpace", () => {
  it("agrees with stripping closed comments and trimming, on texts made of comment parts", () => {
    const part = fc.constantFrom(
      "<!--",
      "-->",
      "<!-- note -->",
      "-",
      "!",
      "<",
      ">",
      " ",
      "\n",
      "\t",
      "\uFEFF",
      "a",
    );
    fc.assert(
      fc.property(fc.array(part, { maxLength: 30 }), (parts) => {
        const text = parts.join("");
        expect(onlyCommentsAndSpace(text)).toBe(reference(text));
      }),
      { numRuns: 3000 },
    );
  });

  it("answers for the template guppy init writes and for real content", () => {
    expect(onlyCommentsAndSpace("<!-- What guppy should remember. -->\n\n<!-- more -->\n")).toBe(
      true,
    );
    expect(onlyCommentsAndSpace("<!-- a -->\n- likes tea\n")).toBe(false);
    expect(onlyCommentsAndSpace("<!--->")).toBe(false);
  });

  it("reads a text of 100,000 unclosed comment openings as content", () => {
    // The old regex rescanned the rest of the text from each opening: quadratic, minutes here.
    expect(onlyCommentsAndSpace("<!--".repeat(100_000))).toBe(false);
  });
});

describe("stat-checked reads of prompt sources", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "guppy-read-cache-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("reads a file again once it changed, even to the same size", () => {
    const path = join(dir, "MEMORY.md");
    expect(readFileFresh(path, dir)).toBeUndefined();
    writeFileSync(path, "likes tea");
    expect(readFileFresh(path, dir)).toBe("likes tea");
    writeFileSync(path, "likes rum");
    // Same size; a coarse clock could give the same mtime, so move it explicitly.
    utimesSync(path, new Date(Date.now() + 5_000), new Date(Date.now() + 5_000));
    expect(readFileFresh(path, dir)).toBe("likes rum");
    rmSync(path);
    expect(readFileFresh(path, dir)).toBeUndefined();
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

describe("prompt sources are never read through a symlink", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "guppy-read-cache-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("refuses a daily note symlinked to a secret, even after reading the note itself", () => {
    const secret = join(dir, "guppy.env");
    writeFileSync(secret, "OPENAI_API_KEY=sk-secret");
    mkdirSync(join(dir, "memory", "202612"), { recursive: true });
    const note = join(dir, "memory", "202612", "20261206.md");
    writeFileSync(note, "bought milk");
    const refused: string[] = [];
    expect(readTextFile(note, dir, (line) => refused.push(line))).toBe("bought milk");
    rmSync(note);
    symlinkSync(secret, note);
    expect(readTextFile(note, dir, (line) => refused.push(line))).toBeUndefined();
    expect(refused).toEqual([`refused ${note} is a symlink, which is refused`]);
  });

  it("refuses a month folder swapped for a symlink to another folder", () => {
    mkdirSync(join(dir, "elsewhere"));
    writeFileSync(join(dir, "elsewhere", "20261206.md"), "another thread's log");
    mkdirSync(join(dir, "memory"));
    symlinkSync(join(dir, "elsewhere"), join(dir, "memory", "202612"));
    const refused: string[] = [];
    const note = join(dir, "memory", "202612", "20261206.md");
    expect(readTextFile(note, dir, (line) => refused.push(line))).toBeUndefined();
    expect(refused).toHaveLength(1);
    expect(refused[0]).toContain(note);
  });
});
