import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLogTail } from "../../src/orchestrator/log-tail.js";
import { createStore, type Store } from "../../src/store/create-store.js";
import { LOG_CURSOR_FILE, type LogEntry } from "../../src/store/thread-layout.js";

const T = "test:c:tail";
const entry = (messageId: string, text: string, isBot = false): LogEntry => ({
  date: "2026-11-22T10:00:00.000Z",
  messageId,
  userId: isBot ? "guppy" : "u1",
  userName: isBot ? "guppy" : "ann",
  text,
  isBot,
});

describe("log tail (backfill bookkeeping)", () => {
  let home: string;
  let store: Store;
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), "guppy-tail-"));
    store = createStore({ home });
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));
  /** The saved cursor's count (the file's first number; a byte offset may follow it). */
  const cursor = () =>
    Number(
      readFileSync(join(store.threadDir(T), LOG_CURSOR_FILE), "utf8")
        .trim()
        .split(" ")[0],
    );
  const texts = (entries: LogEntry[]) => entries.map((e) => e.text);

  it("backfills what was logged before, then only what was appended since, never twice", () => {
    store.appendLog(T, entry("m1", "aside one"));
    store.appendLog(T, entry("m2", "aside two"));
    store.appendLog(T, entry("p1", "the prompt"));
    const tail = createLogTail(store, T);
    expect(texts(tail.backfill(new Set(["p1"])))).toEqual(["aside one", "aside two"]);
    expect(cursor()).toBe(3); // written at once: those two are in the context now
    // The run logs its answer; another sender posts meanwhile.
    store.appendLog(T, entry("r1", "the answer", true));
    store.appendLog(T, entry("m3", "posted during the run"));
    store.appendLog(T, entry("r2", "more of the answer", true));
    tail.afterRun("p1");
    expect(cursor()).toBe(3); // a run moves it in memory only
    store.appendLog(T, entry("p2", "next prompt, logged by its run"));
    store.appendLog(T, entry("r3", "its answer", true));
    tail.afterRun("p2");
    tail.save();
    expect(cursor()).toBe(4); // stops before m3: it is backfilled next time
    store.appendLog(T, entry("m1", "a re-delivery of m1"));
    store.appendLog(T, entry("p3", "third prompt"));
    expect(texts(tail.backfill(new Set(["p3"])))).toEqual(["posted during the run"]);
    expect(cursor()).toBe(10);
    // A fresh tail (after deactivation) resumes from the saved cursor.
    store.appendLog(T, entry("m4", "later"));
    expect(texts(createLogTail(store, T).backfill(new Set()))).toEqual(["later"]);
  });

  it("after a crash, keeps the runs' prompts out of the backfill by the ids the inbox still holds", () => {
    store.appendLog(T, entry("p1", "a prompt that ran"));
    store.appendLog(T, entry("r1", "its answer", true));
    store.appendLog(T, entry("m1", "posted beside it"));
    store.appendLog(T, entry("p2", "another that ran"));
    // No cursor was saved (the process was killed); the inbox still lists p1 and p2.
    const tail = createLogTail(store, T, ["p1", "p2"]);
    expect(texts(tail.backfill(new Set(["p3"])))).toEqual(["posted beside it"]);
    expect(cursor()).toBe(4);
  });

  it("resumes at the saved cursor's byte offset, reading only a window before it for message ids", () => {
    // A long history, all of it caught up with.
    for (let i = 0; i < 2000; i++) store.appendLog(T, entry(`h${i}`, `history ${i}`, i % 2 === 1));
    const first = createLogTail(store, T);
    expect(first.backfill(new Set())).toHaveLength(1000);
    const path = join(store.threadDir(T), "log.jsonl");
    const size = readFileSync(path).length;
    expect(readFileSync(join(store.threadDir(T), LOG_CURSOR_FILE), "utf8").trim()).toBe(
      `2000 ${size}`,
    );
    store.closeFiles(T);
    // While no agent ran: a new post, and a recent one delivered again.
    store.appendLog(T, entry("new1", "posted while idle"));
    store.appendLog(T, entry("h1998", "history 1998, delivered again"));
    const reads: number[] = [];
    const watched: Store = {
      ...store,
      readLogFrom: (id, offset) => {
        reads.push(offset);
        return store.readLogFrom(id, offset);
      },
    };
    const next = createLogTail(watched, T);
    expect(texts(next.backfill(new Set()))).toEqual(["posted while idle"]);
    expect(reads).toEqual([size]); // nothing before the cursor was read again
    expect(cursor()).toBe(2002);
  });

  it("reads the whole log when the cursor has no offset or the log no longer fits it", () => {
    for (let i = 0; i < 3; i++) store.appendLog(T, entry(`a${i}`, `aside ${i}`));
    const dir = store.threadDir(T);
    // A cursor written by an earlier version: the count alone.
    writeFileSync(join(dir, LOG_CURSOR_FILE), "              2\n");
    expect(texts(createLogTail(store, T).backfill(new Set()))).toEqual(["aside 2"]);
    // An offset that is not a line's end any more (the log was rewritten): counted from the start.
    writeFileSync(join(dir, LOG_CURSOR_FILE), "2 7\n");
    expect(texts(createLogTail(store, T).backfill(new Set()))).toEqual(["aside 2"]);
  });

  it("leaves a line still being written for the next read, and starts over when the log is replaced", () => {
    const tail = createLogTail(store, T);
    store.appendLog(T, entry("m1", "one"));
    const path = join(store.threadDir(T), "log.jsonl");
    const half = JSON.stringify(entry("m2", "two"));
    appendFileSync(path, half.slice(0, 20));
    expect(texts(tail.backfill(new Set()))).toEqual(["one"]);
    appendFileSync(path, `${half.slice(20)}\n`);
    expect(texts(tail.backfill(new Set()))).toEqual(["two"]);
    writeFileSync(path, `${JSON.stringify(entry("n1", "rewritten"))}\n`);
    // Shorter than what was read: re-read from 0; the cursor (2) is past its one entry.
    expect(texts(tail.backfill(new Set()))).toEqual([]);
    store.appendLog(T, entry("n2", "after the rewrite"));
    expect(texts(tail.backfill(new Set()))).toEqual(["after the rewrite"]);
  });
});
