import { fsync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openInboxJournal } from "../../src/inbox/inbox-journal.js";
import type { InboxRecord } from "../../src/inbox/inbox-record.js";
import { silentLogger } from "../../src/logging/logger.js";
import { fakeFullDisk } from "../helpers/full-disk.js";

const turn = () => new Promise((r) => setImmediate(r));
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const accepted = (id: string): InboxRecord => ({
  t: "accepted",
  id,
  threadId: "test:c:a",
  text: id,
  at: "2026-11-23T00:00:00.000Z",
});

describe("inbox journal group commit", () => {
  it("runs one fsync at a time; lines written meanwhile share the next one", async () => {
    const dir = mkdtempSync(join(tmpdir(), "guppy-journal-"));
    dirs.push(dir);
    // A slow disk: each fsync completes when the test releases it.
    const held: Array<() => void> = [];
    const journal = openInboxJournal(join(dir, "inbox.jsonl"), silentLogger, {
      fsync: (fd, done) => held.push(() => fsync(fd, done)),
    });
    const synced: string[] = [];
    const accept = (id: string) =>
      journal.appendDeferred([accepted(id)]).then(() => synced.push(id));

    const a = accept("a");
    await turn();
    expect(held).toHaveLength(1);
    const rest = [accept("b"), turn().then(() => accept("c"))];
    await turn();
    await turn();
    expect(held).toHaveLength(1); // b and c wait for the running fsync to end
    expect(synced).toEqual([]);
    held.shift()?.();
    await a;
    expect(synced).toEqual(["a"]);
    expect(held).toHaveLength(1); // one more, for both
    held.shift()?.();
    await Promise.all(rest);
    expect(synced.sort()).toEqual(["a", "b", "c"]);
    const ids = readFileSync(join(dir, "inbox.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l).id);
    expect(ids).toEqual(["a", "b", "c"]);
    journal.close();
  });

  it("writes a turn's deferred lines at its end, all in one write, or when flushed or synced", async () => {
    const dir = mkdtempSync(join(tmpdir(), "guppy-journal-"));
    dirs.push(dir);
    const path = join(dir, "inbox.jsonl");
    const journal = openInboxJournal(path, silentLogger);
    const ids = () =>
      readFileSync(path, "utf8")
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l).id);

    const first = [
      journal.appendDeferred([accepted("a")]),
      journal.appendDeferred([accepted("b")]),
    ];
    expect(ids()).toEqual([]); // not yet: the turn may bring more
    await turn();
    expect(ids()).toEqual(["a", "b"]);
    await Promise.all(first);

    // A progress line goes ahead of the turn's deferred lines; `flush(n)` writes them unless
    // the nth deferred append is written already.
    const c = journal.appendDeferred([accepted("c")]);
    journal.append([{ t: "done", id: "a", at: "2026-11-23T00:00:01.000Z", outcome: "stop" }]);
    expect(ids()).toEqual(["a", "b", "a"]);
    journal.flush(2); // b, the 2nd, is written
    expect(ids()).toEqual(["a", "b", "a"]);
    journal.flush(journal.deferred); // c, the 3rd, is not
    expect(ids()).toEqual(["a", "b", "a", "c"]);
    await c;
    // So does a synced line, which also makes the deferred ones durable.
    const d = journal.appendDeferred([accepted("d")]);
    journal.appendSynced([accepted("e")]);
    expect(ids()).toEqual(["a", "b", "a", "c", "d", "e"]);
    await d;
    // Closing writes what is left.
    const f = journal.appendDeferred([accepted("f")]);
    journal.close();
    await f;
    expect(ids()).toEqual(["a", "b", "a", "c", "d", "e", "f"]);
  });

  it("tells the waiters of a turn's lines when they could not be written", async () => {
    const dir = mkdtempSync(join(tmpdir(), "guppy-journal-"));
    dirs.push(dir);
    const journal = openInboxJournal(join(dir, "inbox.jsonl"), silentLogger);
    const lost = journal.appendDeferred([accepted("x")]);
    rmSync(dir, { recursive: true, force: true }); // the journal and its directory removed
    await expect(lost).rejects.toThrow(/ENOENT/);
    journal.close();
  });
});

describe("inbox journal on a full disk", () => {
  let disk: ReturnType<typeof fakeFullDisk>;
  beforeEach(() => {
    disk = fakeFullDisk();
  });
  afterEach(() => disk.restore());

  it("fails the accepts of a write the disk took only part of, and leaves no half line", async () => {
    const dir = mkdtempSync(join(tmpdir(), "guppy-journal-"));
    dirs.push(dir);
    const path = join(dir, "inbox.jsonl");
    const journal = openInboxJournal(path, silentLogger);
    journal.appendSynced([accepted("a")]);
    const before = readFileSync(path, "utf8");

    // Room for part of the next line only: the write is cut short, the one after fails.
    disk.free = 40;
    const big = journal.appendDeferred([accepted(`b${"x".repeat(500)}`)]);
    await expect(big).rejects.toThrow(`Could not write ${path}: no space left on device (ENOSPC)`);
    expect(readFileSync(path, "utf8")).toBe(before);
    expect(() => journal.appendSynced([accepted("c")])).toThrow(/ENOSPC/);
    expect(readFileSync(path, "utf8")).toBe(before);

    // Space again: the next line starts on a line of its own, and nothing failed comes back.
    disk.free = undefined;
    journal.append([{ t: "done", id: "a", at: "2026-11-23T00:00:01.000Z", outcome: "stop" }]);
    journal.close();
    const reopened = openInboxJournal(path, silentLogger);
    expect(reopened.loaded.map((r) => `${r.t} ${"id" in r ? r.id : ""}`)).toEqual([
      "accepted a",
      "done a",
    ]);
    reopened.close();
  });
});
