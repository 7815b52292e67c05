import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  NoFollowError,
  readNoFollow,
  readTextNoFollow,
  writeNoFollow,
} from "../../src/fs/no-follow.js";

describe("no-follow reads and writes", () => {
  let dir: string;
  let root: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "guppy-test-nofollow-"));
    root = join(dir, "root");
    mkdirSync(join(root, "sub"), { recursive: true });
    writeFileSync(join(dir, "secret"), "the key");
    writeFileSync(join(root, "sub", "note.md"), "a note");
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("reads a regular file under the root and nothing for a missing one", () => {
    expect(readNoFollow(root, join(root, "sub", "note.md"))?.toString()).toBe("a note");
    expect(readNoFollow(root, join(root, "sub", "none.md"))).toBeUndefined();
    expect(() => readTextNoFollow(root, join(root, "none.md"))).toThrow(/ENOENT/);
  });

  it("refuses a symlink at the file, naming it", () => {
    const link = join(root, "sub", "today.md");
    symlinkSync(join(dir, "secret"), link);
    expect(() => readNoFollow(root, link)).toThrow(NoFollowError);
    expect(() => readNoFollow(root, link)).toThrow(`${link} goes through a symlink`);
  });

  it("refuses a folder on the way that is a symlink, even to a folder inside the root", () => {
    symlinkSync(dir, join(root, "away"));
    expect(() => readNoFollow(root, join(root, "away", "secret"))).toThrow(NoFollowError);
    symlinkSync(join(root, "sub"), join(root, "alias"));
    expect(() => readNoFollow(root, join(root, "alias", "note.md"))).toThrow(NoFollowError);
  });

  it("follows a symlink above the root (the owner's own)", () => {
    const linked = join(dir, "linked-root");
    symlinkSync(root, linked);
    expect(readNoFollow(linked, join(linked, "sub", "note.md"))?.toString()).toBe("a note");
  });

  it("refuses what is not a regular file, and a path outside the root", () => {
    expect(() => readNoFollow(root, join(root, "sub"))).toThrow("is not a regular file");
    expect(() => readNoFollow(root, join(dir, "secret"))).toThrow(/outside/);
  });

  it("writes through a temporary file in the opened folder, keeping the mode", () => {
    const path = join(root, "sub", "note.md");
    writeFileSync(path, "old");
    chmodSync(path, 0o640);
    writeNoFollow(root, path, "new text");
    expect(readFileSync(path, "utf8")).toBe("new text");
    expect(statSync(path).mode & 0o777).toBe(0o640);
    writeNoFollow(root, join(root, "made", "deeper", "file.txt"), "x");
    expect(readFileSync(join(root, "made", "deeper", "file.txt"), "utf8")).toBe("x");
  });

  it("never writes through a symlink, at the name or on the way", () => {
    symlinkSync(join(dir, "secret"), join(root, "link"));
    expect(() => writeNoFollow(root, join(root, "link"), "pwned")).toThrow(NoFollowError);
    symlinkSync(dir, join(root, "away"));
    expect(() => writeNoFollow(root, join(root, "away", "secret"), "pwned")).toThrow(NoFollowError);
    expect(() => writeNoFollow(root, join(root, "away", "new", "f"), "pwned")).toThrow(
      NoFollowError,
    );
    expect(readFileSync(join(dir, "secret"), "utf8")).toBe("the key");
  });
});
