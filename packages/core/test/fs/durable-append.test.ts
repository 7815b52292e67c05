import {
  appendFileSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  appendLines,
  forgetAppendState,
  openAppendFd,
  openFileBound,
  openForAppendAsync,
  setOpenFileBound,
} from "../../src/fs/durable-append.js";
import { fakeFullDisk } from "../helpers/full-disk.js";

const lines = (path: string) =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l !== "");

describe("appendLines (files kept open between appends)", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "guppy-append-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** The end of this stretch of synchronous code: what another process did shows after it. */
  const nextStretch = () => new Promise<void>((resolve) => setImmediate(resolve));

  it("appends to the file now at the path after it was replaced by a rename or removed", async () => {
    const path = join(dir, "a.jsonl");
    appendLines(path, [{ n: 1 }]);
    await nextStretch();
    // Replaced behind the appender's back (as an atomic rewrite does): the next line must land
    // in the new file, not in the unlinked old one.
    writeFileSync(join(dir, "tmp"), '{"n":0}\n');
    renameSync(join(dir, "tmp"), path);
    appendLines(path, [{ n: 2 }]);
    expect(lines(path)).toEqual(['{"n":0}', '{"n":2}']);
    await nextStretch();
    unlinkSync(path);
    appendLines(path, [{ n: 3 }]);
    expect(lines(path)).toEqual(['{"n":3}']);
  });

  it("asks whether a file is still at its path once per stretch of synchronous code", async () => {
    const path = join(dir, "s.jsonl");
    appendLines(path, [{ n: 1 }]);
    await nextStretch();
    expect(openAppendFd(path)?.size).toBe(8); // found at its path: the check of this stretch
    // Replaced in the same stretch: taken as a replacement just after the next append, which
    // goes to the file the check found, without a second fstat.
    writeFileSync(join(dir, "tmp"), '{"n":0}\n');
    renameSync(join(dir, "tmp"), path);
    appendLines(path, [{ n: 2 }]);
    expect(lines(path)).toEqual(['{"n":0}']);
    // The next stretch asks again, and appends to the file now at the path.
    await Promise.resolve();
    appendLines(path, [{ n: 3 }]);
    expect(lines(path)).toEqual(['{"n":0}', '{"n":3}']);
  });

  it("after forgetAppendState, a renamed-away file is left alone and the path starts afresh", () => {
    const path = join(dir, "b.jsonl");
    appendLines(path, [{ n: 1 }]);
    forgetAppendState(path);
    renameSync(path, join(dir, "archived.jsonl"));
    appendLines(path, [{ n: 2 }]);
    expect(lines(join(dir, "archived.jsonl"))).toEqual(['{"n":1}']);
    expect(lines(path)).toEqual(['{"n":2}']);
  });

  it("an open under way when the file is forgotten and renamed away (/new) leaves it: the next append goes to the path", async () => {
    const path = join(dir, "d.jsonl");
    appendLines(path, [{ n: 1 }]);
    forgetAppendState(path);
    const opened = openForAppendAsync(path);
    // The thread pool opens the file while this thread is held, so the open has the old file
    // when it is archived (before the open's callback can run).
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    forgetAppendState(path);
    renameSync(path, join(dir, "archived.jsonl"));
    await opened;
    appendLines(path, [{ n: 2 }]);
    expect(lines(join(dir, "archived.jsonl"))).toEqual(['{"n":1}']);
    expect(lines(path)).toEqual(['{"n":2}']);
  });

  it("appends at the end of a truncated file and checks a torn line another writer left", () => {
    const path = join(dir, "c.jsonl");
    appendLines(path, [{ n: 1 }]);
    forgetAppendState(path);
    truncateSync(path, 0);
    appendLines(path, [{ n: 2 }]);
    expect(readFileSync(path, "utf8")).toBe('{"n":2}\n');
    forgetAppendState(path);
    appendFileSync(path, '{"torn":'); // a writer died mid-line
    appendLines(path, [{ n: 3 }]);
    expect(readFileSync(path, "utf8")).toBe('{"n":2}\n{"torn":\n{"n":3}\n');
  });

  it("throws when the disk takes only part of an append, and leaves no half line behind", () => {
    const path = join(dir, "context.jsonl");
    appendLines(path, [{ n: 1 }]);
    const disk = fakeFullDisk();
    try {
      // Room for the first record and part of the second: neither may stay (the caller tries
      // both again), and nothing may be glued to a half line.
      disk.free = 12;
      expect(() => appendLines(path, [{ n: 2 }, { n: 3, pad: "x".repeat(100) }])).toThrow(
        `Could not append to ${path}: no space left on device (ENOSPC)`,
      );
      expect(readFileSync(path, "utf8")).toBe('{"n":1}\n');
      disk.free = undefined;
      appendLines(path, [{ n: 2 }, { n: 3 }]);
      appendLines(path, [{ n: 4 }]);
      expect(lines(path)).toEqual(['{"n":1}', '{"n":2}', '{"n":3}', '{"n":4}']);
    } finally {
      disk.restore();
    }
  });

  it("keeps every line of many files, in order, through evictions of the files kept open", () => {
    // More files than are kept open: every round reopens the evicted ones.
    const old = setOpenFileBound(100);
    try {
      const paths = Array.from({ length: 150 }, (_, i) => join(dir, `f${i}.jsonl`));
      for (let round = 0; round < 3; round++)
        for (const [i, path] of paths.entries()) appendLines(path, [{ i, round }]);
      for (const [i, path] of paths.entries())
        expect(lines(path)).toEqual([0, 1, 2].map((round) => JSON.stringify({ i, round })));
    } finally {
      setOpenFileBound(old);
    }
  });

  it("closes the least recently appended files first when too many are open", () => {
    const old = setOpenFileBound(8);
    try {
      const paths = Array.from({ length: 9 }, (_, i) => join(dir, `f${i}.jsonl`));
      for (const path of paths.slice(0, 8)) appendLines(path, [{ first: true }]);
      // f0 and f1 are used again: f2 and f3 are now the least recently used.
      appendLines(paths[0] as string, [{ again: true }]);
      appendLines(paths[1] as string, [{ again: true }]);
      appendLines(paths[8] as string, [{ first: true }]); // over the bound: a quarter goes
      const open = paths.map((path) => openAppendFd(path) !== undefined);
      expect(open).toEqual([true, true, false, false, true, true, true, true, true]);
      // Closed is not lost: the next append opens it again.
      appendLines(paths[2] as string, [{ again: true }]);
      expect(lines(paths[2] as string)).toHaveLength(2);
    } finally {
      setOpenFileBound(old);
    }
  });
});

describe("openFileBound (how many append files stay open)", () => {
  const limits = (soft: string, hard: string) =>
    [
      "Limit                     Soft Limit           Hard Limit           Units     ",
      "Max processes             63432                63432                processes ",
      `Max open files            ${soft.padEnd(21)}${hard.padEnd(21)}files     `,
      "Max locked memory         8388608              8388608              bytes     ",
    ].join("\n");

  it("keeps half the soft open-files limit, within 64 and 8,192", () => {
    expect(openFileBound(limits("4096", "4096"))).toBe(2048);
    expect(openFileBound(limits("1024", "4096"))).toBe(512);
    expect(openFileBound(limits("20000", "20000"))).toBe(8192);
    expect(openFileBound(limits("1048576", "1048576"))).toBe(8192);
    expect(openFileBound(limits("unlimited", "unlimited"))).toBe(8192);
    expect(openFileBound(limits("100", "100"))).toBe(64);
  });

  it("falls back to 2,048 without /proc/self/limits or its open-files line", () => {
    expect(openFileBound(undefined)).toBe(2048);
    expect(openFileBound("Limit  Soft Limit  Hard Limit  Units\n")).toBe(2048);
  });
});
