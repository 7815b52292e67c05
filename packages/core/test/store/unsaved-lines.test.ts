import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentMessage } from "@mariozechner/pi-agent-core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createStore, type Store } from "../../src/store/create-store.js";
import type { LogEntry } from "../../src/store/thread-layout.js";
import { fakeFullDisk } from "../helpers/full-disk.js";

const user = (text: string): AgentMessage => ({ role: "user", content: text, timestamp: 1 });
const entry = (text: string, isBot = false): LogEntry => ({
  date: "2026-11-27T00:00:00.000Z",
  messageId: `m-${text}`,
  userId: isBot ? "guppy" : "u",
  userName: isBot ? "guppy" : "ann",
  text,
  isBot,
});
const lines = (path: string) =>
  existsSync(path)
    ? readFileSync(path, "utf8")
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l) as { text?: string; content?: unknown })
    : [];

describe("store on a full disk", () => {
  const id = "test:c:t";
  let home: string;
  let disk: ReturnType<typeof fakeFullDisk>;
  let store: Store;
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), "guppy-unsaved-"));
    disk = fakeFullDisk();
    // A long retry period: the tests that want the timer make their own store.
    store = createStore({ home, unsavedRetryMs: 60_000 });
  });
  afterEach(() => {
    disk.restore();
    rmSync(home, { recursive: true, force: true });
  });

  it("keeps log entries and context messages it cannot write, and writes them in order before the next ones", async () => {
    store.appendLog(id, entry("before"));
    expect(store.whenSaved(id)).toBeUndefined();
    disk.free = 0;
    // Not thrown: the run goes on, and what it wrote is kept.
    store.appendLog(id, entry("question"));
    store.appendLog(id, entry("answer", true));
    store.appendContext(id, [user("q"), user("a")]);
    const saved = store.whenSaved(id);
    expect(saved).toBeDefined();
    let done = false;
    void saved?.then(() => {
      done = true;
    });
    // On disk: only what was written; the context as the runner reloads it has all of it.
    expect(store.readLog(id).map((e) => e.text)).toEqual(["before"]);
    expect(store.loadContext(id)).toEqual([user("q"), user("a")]);
    // Still full: the next line is kept behind them, not written ahead of them.
    store.appendLog(id, entry("later"));
    await Promise.resolve();
    expect(done).toBe(false);
    // Room again: the next append writes the file's kept lines first, then the other files'.
    disk.free = undefined;
    store.appendLog(id, entry("after"));
    expect(lines(store.logFile(id)).map((e) => e.text)).toEqual([
      "before",
      "question",
      "answer",
      "later",
      "after",
    ]);
    expect(store.whenSaved(id)).toBeUndefined();
    store.appendContext(id, [user("next")]);
    await saved;
    expect(done).toBe(true);
    expect(lines(join(store.threadDir(id), "context.jsonl"))).toEqual([
      user("q"),
      user("a"),
      user("next"),
    ]);
    expect(store.loadContext(id)).toEqual([user("q"), user("a"), user("next")]);
  });

  it("tries again on a timer while anything is kept", async () => {
    const quick = createStore({ home, unsavedRetryMs: 20 });
    disk.free = 0;
    quick.appendLog(id, entry("answer", true));
    const saved = quick.whenSaved(id);
    expect(saved).toBeDefined();
    await new Promise((r) => setTimeout(r, 100));
    expect(quick.readLog(id)).toEqual([]);
    disk.free = undefined;
    await saved;
    expect(quick.readLog(id).map((e) => e.text)).toEqual(["answer"]);
  });

  it("keeps a context rewrite it cannot write, with the messages appended after it", async () => {
    store.appendContext(id, [user("old 1"), user("old 2")]);
    disk.free = 0;
    store.appendContext(id, [user("old 3")]);
    store.saveContext(id, [user("summary")]);
    store.appendContext(id, [user("new")]);
    expect(store.loadContext(id)).toEqual([user("summary"), user("new")]);
    // The file is as it was.
    expect(lines(join(store.threadDir(id), "context.jsonl"))).toEqual([
      user("old 1"),
      user("old 2"),
    ]);
    disk.free = undefined;
    store.appendLog(id, entry("unrelated"));
    expect(store.whenSaved(id)).toBeUndefined();
    store.appendContext(id, [user("newer")]);
    expect(lines(join(store.threadDir(id), "context.jsonl"))).toEqual([
      user("summary"),
      user("new"),
      user("newer"),
    ]);
  });

  it("puts kept context messages aside with the conversation on /new", () => {
    store.appendContext(id, [user("one")]);
    disk.free = 0;
    store.appendContext(id, [user("two")]);
    const archive = store.archiveContext(id);
    expect(archive).toBeDefined();
    expect(store.loadContext(id)).toEqual([]);
    disk.free = undefined;
    store.appendContext(id, [user("fresh")]);
    expect(store.whenSaved(id)).toBeUndefined();
    expect(lines(archive as string)).toEqual([user("one"), user("two")]);
    expect(lines(join(store.threadDir(id), "context.jsonl"))).toEqual([user("fresh")]);
  });

  it("still throws what is not a full disk", () => {
    store.appendLog(id, entry("x"));
    rmSync(store.logFile(id));
    // A directory where the file should be: EISDIR, not kept.
    store.closeFiles(id);
    mkdirSync(store.logFile(id));
    expect(() => store.appendLog(id, entry("y"))).toThrow(/EISDIR/);
    expect(store.whenSaved(id)).toBeUndefined();
  });
});
