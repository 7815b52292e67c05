import { spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isConfigError } from "../../src/config/config-error.js";
import {
  createInbox,
  INBOX_FILE,
  INBOX_LOCK_FILE,
  type Inbox,
} from "../../src/inbox/create-inbox.js";
import { createLineLogger } from "../../src/logging/logger.js";
import { createStore, type Store } from "../../src/store/create-store.js";
import { fakeFullDisk } from "../helpers/full-disk.js";

const until = async (predicate: () => boolean, ms = 5000) => {
  const t0 = Date.now();
  while (!predicate()) {
    if (Date.now() - t0 > ms) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe("inbox journal", () => {
  let home: string;
  let store: Store;
  let open: Inbox[];
  const make = (compactBytes?: number) => {
    const inbox = createInbox({ store, ...(compactBytes ? { compactBytes } : {}) });
    open.push(inbox);
    return inbox;
  };
  const journal = () => readFileSync(join(home, INBOX_FILE), "utf8");
  const lines = () =>
    journal()
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as Record<string, unknown>);

  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), "guppy-inbox-"));
    store = createStore({ home });
    open = [];
  });
  afterEach(() => {
    for (const inbox of open) inbox.close();
    rmSync(home, { recursive: true, force: true });
  });

  it("keeps every thread's prompts in one file and rebuilds what is pending on reopen", async () => {
    const inbox = make();
    const a1 = inbox.accept("test:c:a", { text: "a1" }).record;
    const b1 = inbox.accept("test:c:b", { text: "b1", messageId: "m-b1" }).record;
    const a2 = inbox.accept("test:c:a", { text: "a2" }, true);
    await a2.synced;
    inbox.tool("test:c:a", a1.id, "bash", { command: "ls" });
    inbox.done("test:c:a", a1.id, "stop");
    expect(lines().map((l) => l.t)).toEqual(["accepted", "accepted", "accepted", "tool", "done"]);
    inbox.close();

    const again = make();
    // In the order accepted across threads: thread a's first line is older than b1, but a1 is
    // answered, and b1 came before a2.
    expect(again.scan()).toEqual([
      { record: b1, tools: [] },
      { record: a2.record, tools: [] },
    ]);
    // Answered or not, the prompts since the last clear keep their log lines out of backfill.
    expect(again.promptIds("test:c:a").sort()).toEqual([a1.id, a2.record.id].sort());
    expect(again.promptIds("test:c:b")).toEqual(["m-b1"]);
  });

  it("keeps the pending prompts in the order accepted through compactions", () => {
    const inbox = make(2_000);
    const accept = (thread: string, text: string) => inbox.accept(`test:c:${thread}`, { text });
    const a1 = accept("a", "a1").record;
    for (const [thread, text] of [
      ["b", "b1"],
      ["a", "a2"],
      ["c", "c1"],
      ["a", "a3"],
      ["b", "b2"],
    ]) {
      accept(thread as string, text as string);
    }
    inbox.tool("test:c:b", inbox.scan()[1]?.record.id ?? "", "bash", { command: "ls" });
    inbox.done("test:c:a", a1.id, "aborted");
    const order = ["b1", "a2", "c1", "a3", "b2"];
    const texts = (i: Inbox) => i.scan().map((p) => p.record.text);
    expect(texts(inbox)).toEqual(order);
    // Past the threshold: the journal is rewritten while the prompts wait.
    for (let i = 0; i < 40; i++) {
      const p = accept("d", `filler ${i} ${"x".repeat(40)}`).record;
      inbox.done("test:c:d", p.id, "stop");
    }
    const accepted = lines()
      .filter((l) => l.t === "accepted")
      .map((l) => String(l.text));
    expect(accepted).not.toContain(`filler 0 ${"x".repeat(40)}`); // it was compacted
    expect(accepted.slice(0, 5)).toEqual(order);
    inbox.close();
    // Each start compacts too; the order holds through two of them, tool lines and all.
    make().close();
    const again = make();
    expect(texts(again)).toEqual(order);
    expect(again.scan()[0]?.tools).toEqual([{ name: "bash", args: '{"command":"ls"}' }]);
  });

  it("resolves every deferred accept of a burst once it is on disk", async () => {
    const inbox = make();
    const accepted = Array.from({ length: 50 }, (_, i) =>
      inbox.accept(`test:c:t${i % 7}`, { text: `p${i}` }, true),
    );
    await Promise.all(accepted.map((a) => a.synced));
    const ids = lines().map((l) => l.id);
    for (const a of accepted) expect(ids).toContain(a.record.id);
  });

  it("writes a deferred accept before its run starts, and only when it is not written yet", async () => {
    const inbox = make();
    const early = inbox.accept("test:c:a", { text: "early" }, true);
    await early.synced; // the end of its turn wrote it
    const writes = () => journal().split("\n").length - 1;
    expect(writes()).toBe(1);
    const late = inbox.accept("test:c:b", { text: "late" }, true);
    // The early prompt's run starts: its line is there, the late one's waits for the turn's end.
    inbox.written(early.record);
    expect(writes()).toBe(1);
    // The late prompt's run starts in the same turn: its line goes now, before anything it writes.
    inbox.written(late.record);
    expect(lines().map((l) => l.id)).toEqual([early.record.id, late.record.id]);
    await late.synced;
    expect(writes()).toBe(2);
    // A progress line waits for nothing but its own prompt's accept: another prompt's deferred
    // accept is left for the turn's end, its own is written first.
    const other = inbox.accept("test:c:c", { text: "other" }, true);
    const own = inbox.accept("test:c:d", { text: "own" }, true);
    inbox.done("test:c:a", early.record.id, "stop");
    expect(lines().map((l) => [l.t, l.id])).toEqual([
      ["accepted", early.record.id],
      ["accepted", late.record.id],
      ["done", early.record.id],
    ]);
    inbox.tool("test:c:d", own.record.id, "bash", { command: "ls" });
    expect(lines().map((l) => [l.t, l.id])).toEqual([
      ["accepted", early.record.id],
      ["accepted", late.record.id],
      ["done", early.record.id],
      ["accepted", other.record.id],
      ["accepted", own.record.id],
      ["tool", own.record.id],
    ]);
    await Promise.all([other.synced, own.synced]);
  });

  it("forgets a cleared thread's answered prompts, also after a reopen", () => {
    const inbox = make();
    const p = inbox.accept("test:c:a", { text: "hello" }).record;
    inbox.done("test:c:a", p.id, "stop");
    inbox.clear("test:c:a");
    expect(inbox.promptIds("test:c:a")).toEqual([]);
    inbox.close();
    const again = make();
    expect(again.promptIds("test:c:a")).toEqual([]);
    expect(again.scan()).toEqual([]);
    // Reopening compacts: nothing of the cleared thread is left in the file.
    expect(journal()).toBe("");
  });

  it("lists the threads with ids not cleared yet and nothing pending, also after a reopen", () => {
    const inbox = make();
    const a = inbox.accept("test:c:a", { text: "answered" }).record;
    inbox.done("test:c:a", a.id, "stop");
    inbox.handled("test:c:b", "stop-1");
    const c = inbox.accept("test:c:c", { text: "answered" }).record;
    inbox.done("test:c:c", c.id, "stop");
    inbox.accept("test:c:c", { text: "pending" });
    inbox.accept("test:c:d", { text: "pending" });
    const e = inbox.accept("test:c:e", { text: "answered" }).record;
    inbox.done("test:c:e", e.id, "stop");
    inbox.clear("test:c:e");
    // c has a prompt to replay (its actor clears it), d nothing answered, e is cleared.
    expect(inbox.uncleared()).toEqual(["test:c:a", "test:c:b"]);
    inbox.close();
    expect(make().uncleared()).toEqual(["test:c:a", "test:c:b"]);
  });

  it("compacts past its threshold to the pending prompts and the uncleared answered ids", () => {
    const inbox = make(2_000);
    let pending = inbox.accept("test:c:keep", { text: "still waiting" }).record;
    inbox.tool("test:c:keep", pending.id, "write", { path: "x" });
    let lastRan = "";
    for (let i = 0; i < 200; i++) {
      const thread = `test:c:t${i % 5}`;
      const p = inbox.accept(thread, { text: `prompt ${i} ${"x".repeat(40)}` }).record;
      inbox.done(thread, p.id, "stop");
      // Every thread goes idle after its prompt, but t3's last one is not cleared yet.
      if (i % 5 !== 3 || i < 195) inbox.clear(thread);
      lastRan = p.id;
      expect(statSync(join(home, INBOX_FILE)).size).toBeLessThan(4_000);
    }
    expect(inbox.promptIds("test:c:t4")).toEqual([]);
    expect(inbox.promptIds("test:c:t3")).toHaveLength(1);
    const after = lines();
    expect(after.some((l) => l.t === "ran")).toBe(true);
    expect(after.filter((l) => l.t === "accepted").map((l) => l.id)).toContain(pending.id);
    inbox.close();
    const again = make();
    const [kept] = again.scan();
    expect(kept?.record.threadId).toBe("test:c:keep");
    pending = kept?.record ?? pending;
    expect(kept?.tools).toEqual([{ name: "write", args: '{"path":"x"}' }]);
    expect(pending.text).toBe("still waiting");
    expect(again.promptIds("test:c:t3")).toHaveLength(1);
    expect(again.promptIds("test:c:t4")).toEqual([]);
    expect(again.promptIds("test:c:t3")).not.toContain(lastRan);
  });

  it("skips a torn last line and does not glue the next record to it", () => {
    make().close();
    open = [];
    const p = { t: "accepted", id: "in-x", threadId: "test:c:a", at: "now", text: "kept" };
    writeFileSync(join(home, INBOX_FILE), `${JSON.stringify(p)}\n{"t":"accepted","id":"in-`);
    const inbox = make();
    expect(inbox.scan().map((q) => q.record.text)).toEqual(["kept"]);
    inbox.accept("test:c:a", { text: "next" });
    expect(lines().map((l) => l.text)).toEqual(["kept", "next"]);
  });

  it("writes the journal anew when it was removed while guppy ran", () => {
    const inbox = make();
    inbox.accept("test:c:a", { text: "first" });
    rmSync(join(home, INBOX_FILE));
    inbox.accept("test:c:a", { text: "second" });
    expect(lines().map((l) => l.text)).toEqual(["second"]);
  });

  it("refuses a GUPPY_HOME whose journal another live process holds, takes over a dead one's", () => {
    const lock = join(home, INBOX_LOCK_FILE);
    const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
      encoding: "utf8",
    });
    writeFileSync(lock, `${child.stdout}\n`);
    make();
    expect(readFileSync(lock, "utf8").trim()).toBe(String(process.pid));
    for (const inbox of open) inbox.close();
    open = [];
    expect(() => statSync(lock)).toThrow();

    // A live process that is not this one: the parent of this test process.
    writeFileSync(lock, `${process.ppid}\n`);
    let error: unknown;
    try {
      make();
    } catch (e) {
      error = e;
    }
    expect(isConfigError(error)).toBe(true);
    expect((error as Error).message).toContain(`pid ${process.ppid}`);
    expect((error as Error).message).not.toContain("\n");
    // Nothing was taken: the other process's lock is as it was.
    expect(readFileSync(lock, "utf8").trim()).toBe(String(process.ppid));

    // The same pid, but the lock was written before this boot (a power cut): stale.
    utimesSync(lock, new Date(0), new Date(0));
    make().close();
    open = [];

    // A live pid that runs something other than node now (the pid was reused): stale on Linux.
    if (existsSync("/proc/self/cmdline")) {
      const sleeper = spawn("sleep", ["30"]);
      try {
        writeFileSync(lock, `${sleeper.pid}\n`);
        make();
        expect(readFileSync(lock, "utf8").trim()).toBe(String(process.pid));
      } finally {
        sleeper.kill();
      }
    }
  });

  describe("on a full disk", () => {
    let disk: ReturnType<typeof fakeFullDisk>;
    beforeEach(() => {
      disk = fakeFullDisk();
    });
    afterEach(() => disk.restore());

    it("refuses to start with one line naming the journal, which it leaves as it was", () => {
      const first = make();
      for (let i = 0; i < 5; i++) first.accept("test:c:a", { text: `waiting ${i}` });
      first.close();
      open = [];
      const before = journal();
      // Room for part of the start-time rewrite: it must not replace the journal.
      disk.free = 100;
      expect(() => make()).toThrow(
        `Could not write ${join(home, INBOX_FILE)}: no space left on device (ENOSPC)`,
      );
      expect(journal()).toBe(before);
      // The lock was let go, and with space again every prompt is there.
      disk.free = undefined;
      expect(
        make()
          .scan()
          .map((p) => p.record.text),
      ).toEqual([0, 1, 2, 3, 4].map((i) => `waiting ${i}`));
    });

    it("names the lock file when it cannot be written, and leaves no empty lock behind", () => {
      disk.free = 0;
      expect(() => make()).toThrow(
        `Could not write ${join(home, INBOX_LOCK_FILE)}: no space left on device (ENOSPC)`,
      );
      expect(existsSync(join(home, INBOX_LOCK_FILE))).toBe(false);
    });

    it("carries on with the journal as it is when a compaction does not fit", async () => {
      const warnings: string[] = [];
      const logger = createLineLogger({ write: (line) => warnings.push(line) });
      const inbox = createInbox({ store, logger, compactBytes: 2_000 });
      open.push(inbox);
      const big = Array.from(
        { length: 5 },
        (_, i) => inbox.accept("test:c:a", { text: `${i} ${"x".repeat(500)}` }).record,
      );
      const small = inbox.accept("test:c:b", { text: "small" }).record;
      // Room for a few lines, not for the compacted journal (the five big prompts).
      disk.free = 400;
      const late = inbox.accept("test:c:c", { text: "accepted in the compaction's turn" }, true);
      inbox.done("test:c:b", small.id, "stop"); // past the threshold: compacts, which fails
      expect(warnings.join("\n")).toMatch(/Could not compact the inbox journal.*ENOSPC/);
      disk.free = undefined; // the removed temp file's space is free again
      await late.synced;
      inbox.close();
      open = [];
      // Nothing was lost: the late accept went to the old journal after all.
      expect(
        make()
          .scan()
          .map((p) => p.record.id),
      ).toEqual([...big.map((p) => p.id), late.record.id]);
    });
    it("keeps the progress lines it could not write and writes them once there is room", async () => {
      const inbox = createInbox({ store, retryMs: 20 });
      open.push(inbox);
      const first = inbox.accept("test:c:a", { text: "first" }).record;
      disk.free = 0;
      // A tool line and a done line the disk refuses: kept, not lost.
      inbox.tool("test:c:a", first.id, "bash", { command: "rm -rf scratch" });
      inbox.done("test:c:a", first.id, "stop");
      expect(lines().map((l) => l.t)).toEqual(["accepted"]);
      expect(inbox.pending("test:c:a")).toEqual([]);
      // Room again: the timer writes them.
      disk.free = undefined;
      await until(() => lines().length === 3);
      expect(lines().map((l) => l.t)).toEqual(["accepted", "tool", "done"]);
      // Or the next line that goes through takes them along.
      disk.free = 0;
      const second = inbox.accept("test:c:b", { text: "second" }, true);
      await expect(second.synced).rejects.toThrow(/ENOSPC/);
      disk.free = undefined;
      const third = inbox.accept("test:c:b", { text: "third" }).record;
      disk.free = 0;
      inbox.done("test:c:b", third.id, "stop");
      disk.free = undefined;
      inbox.handled("test:c:b", "m-1");
      expect(lines().map((l) => l.t)).toEqual([
        "accepted",
        "tool",
        "done",
        "accepted",
        "done",
        "ran",
      ]);
      inbox.close();
      open = [];
      expect(make().scan()).toEqual([]);
    });
  });

  it("keeps a journal elsewhere under its owner's lock, and imports no legacy per-thread inbox", () => {
    const dir = join(home, "cli", "local", "s");
    mkdirSync(dir, { recursive: true });
    // What an earlier version left in the thread's folder: the home's journal imports it, not this.
    writeFileSync(
      join(dir, "inbox.jsonl"),
      `${JSON.stringify({ t: "accepted", id: "in-old", threadId: "cli:local:s", at: "2026-01-01T00:00:00Z", text: "old" })}\n`,
    );
    const file = join(dir, "chat-inbox.jsonl");
    let locks = 0;
    let releases = 0;
    const location = {
      file,
      lock: () => {
        locks++;
        return () => {
          releases++;
        };
      },
    };
    const inbox = createInbox({ store, location });
    const { record } = inbox.accept("cli:local:s", { text: "hello" });
    inbox.close();
    expect([locks, releases]).toEqual([1, 1]);
    expect(existsSync(join(home, INBOX_FILE))).toBe(false);
    expect(existsSync(join(home, INBOX_LOCK_FILE))).toBe(false);
    expect(existsSync(join(dir, "inbox.jsonl"))).toBe(true);
    const again = createInbox({ store, location });
    expect(again.scan().map((p) => p.record.id)).toEqual([record.id]);
    again.close();
  });
});
