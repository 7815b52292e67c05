import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentMessage } from "@mariozechner/pi-agent-core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Logger } from "../../src/logging/logger.js";
import { createStore } from "../../src/store/create-store.js";

const user = (text: string): AgentMessage => ({ role: "user", content: text, timestamp: 1 });

function recordingLogger() {
  const warnings: string[] = [];
  const logger: Logger = {
    debug() {},
    info() {},
    warn: (m) => warnings.push(m),
    error: (m) => warnings.push(m),
  };
  return { logger, warnings };
}

describe("store", () => {
  let home: string;
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), "guppy-store-"));
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it("lays threads out as <home>/<adapter>/<channel>/<thread>/ with scratch/ as workspace", () => {
    const store = createStore({ home });
    store.appendContext("cli:local:default", [user("hi")]);
    expect(existsSync(join(home, "cli/local/default/context.jsonl"))).toBe(true);
    expect(store.workspaceDir("cli:local:default")).toBe(join(home, "cli/local/default/scratch"));
    // Not made until a tool needs it (bash creates it before its first command).
    expect(existsSync(join(home, "cli/local/default/scratch"))).toBe(false);
  });

  it("creates a new thread's files off the event loop, keeps them for its appends, closes them when asked", async () => {
    const store = createStore({ home });
    const id = "test:c:fresh";
    await store.openFiles(id);
    const dir = store.threadDir(id);
    expect(readdirSync(dir).sort()).toEqual(["context.jsonl", "log.jsonl"]);
    const entry = {
      date: "d",
      messageId: "m1",
      userId: "u",
      userName: "ann",
      text: "hi",
      isBot: false,
    };
    store.appendLog(id, entry);
    store.appendContext(id, [user("hello")]);
    const tail = store.readLogFrom(id, 0);
    expect("records" in tail && tail.records.map((e) => e.text)).toEqual(["hi"]);
    store.closeFiles(id);
    // Closed, then the path changed behind guppy's back: the next append opens the new file.
    rmSync(join(dir, "log.jsonl"));
    store.appendLog(id, { ...entry, messageId: "m2", text: "again" });
    expect(store.readLog(id).map((e) => e.text)).toEqual(["again"]);
    expect(store.loadContext(id)).toHaveLength(1);
  });

  it("makes a thread's directory again when it is removed while its files are open or closed", async () => {
    const store = createStore({ home });
    const id = "test:c:reset";
    await store.openFiles(id);
    store.appendContext(id, [user("one")]);
    // Removed mid-run (the files are open) by another process, which this one sees once its
    // stretch of synchronous code ends: the next appends go to new files at the path.
    rmSync(store.threadDir(id), { recursive: true });
    await new Promise((resolve) => setImmediate(resolve));
    store.appendContext(id, [user("two")]);
    expect(store.loadContext(id)).toEqual([user("two")]);
    store.closeFiles(id);
    // Removed while idle: opening the files for the next run makes the directory again.
    rmSync(store.threadDir(id), { recursive: true });
    await store.openFiles(id);
    expect(readdirSync(store.threadDir(id)).sort()).toEqual(["context.jsonl", "log.jsonl"]);
  });
  it("reads its own appends after a tail read from memory, and the file when another writer added lines", async () => {
    const store = createStore({ home });
    const id = "test:c:tail";
    await store.openFiles(id);
    const path = join(store.threadDir(id), "log.jsonl");
    const entry = (n: number) => ({
      date: "d",
      messageId: `m${n}`,
      userId: "u",
      userName: "ann",
      text: `line ${n}`,
      isBot: false,
    });
    const read = (offset: number) => {
      const tail = store.readLogFrom(id, offset);
      if ("restart" in tail) throw new Error("unexpected restart");
      return tail;
    };
    store.appendLog(id, entry(1));
    const first = read(0);
    expect(first.records.map((e) => e.text)).toEqual(["line 1"]);
    store.appendLog(id, entry(2));
    store.appendLog(id, entry(3));
    // Overwritten in place at the same size: only a read from memory still sees "line 2".
    const text = readFileSync(path, "utf8");
    writeFileSync(path, text.replace("line 2", "LINE 2"));
    const second = read(first.end);
    expect(second.records.map((e) => e.text)).toEqual(["line 2", "line 3"]);
    expect(second.end).toBe(text.length);
    // Another writer appended between this process's lines: the file is read, in file order.
    store.appendLog(id, entry(4));
    appendFileSync(path, `${JSON.stringify(entry(5))}\n`);
    store.appendLog(id, entry(6));
    const third = read(second.end);
    expect(third.records.map((e) => e.text)).toEqual(["line 4", "line 5", "line 6"]);
    expect(third.end).toBe(readFileSync(path, "utf8").length);
    store.appendLog(id, entry(7));
    expect(read(third.end).records.map((e) => e.text)).toEqual(["line 7"]);
  });

  it("saves a thread's status over its old file in place, shorter or longer, and reads it back", () => {
    const store = createStore({ home });
    const id = "telegram:c:status";
    const figures = { messages: 2, contextTokens: 10, contextWindow: 1000, compactions: 0 };
    const long = { lastActivity: "2026-11-23T10:00:00.000Z", ...figures, cost: 0.123456789012345 };
    const short = { lastActivity: "2026-11-23T11:00:00.000Z", ...figures, cost: 0 };
    // No directory, no file: a thread removed by hand is not brought back.
    store.saveStatus(id, long);
    expect(existsSync(store.threadDir(id))).toBe(false);
    store.ensureThreadDir(id);
    const file = join(store.threadDir(id), "status.json");
    store.saveStatus(id, long);
    const inode = statSync(file).ino;
    store.saveStatus(id, short);
    // The same file, cut to the shorter text: no rename (on ext4 it would flush at close).
    expect(statSync(file).ino).toBe(inode);
    expect(readFileSync(file, "utf8")).toBe(`${JSON.stringify(short)}\n`);
    expect(store.readStatus(id)).toEqual(short);
    store.saveStatus(id, long);
    expect(store.readStatus(id)).toEqual(long);
    expect(readdirSync(store.threadDir(id))).toEqual(["status.json"]);
  });

  it("appends whole lines and reads them back in order", () => {
    const store = createStore({ home });
    store.appendContext("cli:local:a", [user("one"), user("two")]);
    store.appendContext("cli:local:a", [user("three")]);
    expect(store.loadContext("cli:local:a").map((m) => (m as { content: string }).content)).toEqual(
      ["one", "two", "three"],
    );
    const text = readFileSync(join(home, "cli/local/a/context.jsonl"), "utf8");
    expect(text.endsWith("\n")).toBe(true);
    expect(text.trim().split("\n")).toHaveLength(3);
  });

  it("skips a torn last line with a warning, and a later append does not merge into it", () => {
    const { logger, warnings } = recordingLogger();
    const store = createStore({ home, logger });
    store.appendContext("cli:local:t", [user("kept")]);
    const file = join(home, "cli/local/t/context.jsonl");
    appendFileSync(file, '{"role":"user","content":"tor'); // crash mid-write
    expect(store.loadContext("cli:local:t")).toHaveLength(1);
    expect(warnings.some((w) => w.includes("line 2") && w.includes(file))).toBe(true);

    store.appendContext("cli:local:t", [user("after")]);
    const loaded = store.loadContext("cli:local:t").map((m) => (m as { content: string }).content);
    expect(loaded).toEqual(["kept", "after"]);
  });

  it("loads a context it holds open: empty when new, then every line in file order, and the file now at the path after a rename", async () => {
    const store = createStore({ home });
    const id = "test:c:open";
    await store.openFiles(id);
    expect(store.loadContext(id)).toEqual([]);
    const path = join(store.threadDir(id), "context.jsonl");
    store.appendContext(id, [user("one")]);
    appendFileSync(path, `${JSON.stringify(user("two"))}\n`); // another writer
    store.appendContext(id, [user("three")]);
    const texts = () => store.loadContext(id).map((m) => (m as { content: string }).content);
    expect(texts()).toEqual(["one", "two", "three"]);
    // Replaced by a rename (an editor's save): the new file is read, not the open one.
    writeFileSync(`${path}.new`, `${JSON.stringify(user("edited"))}\n`);
    renameSync(`${path}.new`, path);
    expect(texts()).toEqual(["edited"]);
    store.appendContext(id, [user("after")]);
    expect(texts()).toEqual(["edited", "after"]);
  });

  it("rewrites context atomically through a temp file and leaves no temp behind", () => {
    const store = createStore({ home });
    store.appendContext("cli:local:r", [user("old1"), user("old2")]);
    store.saveContext("cli:local:r", [user("new")]);
    expect(store.loadContext("cli:local:r")).toEqual([user("new")]);
    expect(readdirSync(join(home, "cli/local/r")).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it("archives the context for /new and starts empty", () => {
    const store = createStore({ home });
    store.appendContext("cli:local:n", [user("x")]);
    const archived = store.archiveContext("cli:local:n");
    expect(archived && existsSync(archived)).toBe(true);
    expect(store.loadContext("cli:local:n")).toEqual([]);
  });

  it("logs human-readable entries and ignores invalid ones", () => {
    const { logger } = recordingLogger();
    const store = createStore({ home, logger });
    const entry = {
      date: "2026-01-01T00:00:00.000Z",
      messageId: "m1",
      userId: "u",
      userName: "Ann",
      text: "hello",
      isBot: false,
    };
    store.appendLog("telegram:42:default", entry);
    writeFileSync(
      join(home, "telegram/42/default/log.jsonl"),
      `${JSON.stringify(entry)}\n{"nope":1}\n`,
    );
    expect(store.readLog("telegram:42:default")).toEqual([entry]);
    expect(store.listThreads()).toContain("telegram:42:default");
  });

  it("lists a thread whose id was too long to name its directory by the id it has", async () => {
    const store = createStore({ home });
    const longThread = `http:api:${"t".repeat(200)}`;
    const longChannel = `slack:${"C".repeat(150)}:1700000000.1`;
    await store.openFiles(longThread);
    await store.openFiles(longChannel);
    for (const id of [longThread, longChannel]) {
      expect(store.threadDir(id)).toMatch(/~[0-9a-f]{16}$|~[0-9a-f]{16}\/1700000000\.1$/);
    }
    expect(store.listThreads().sort()).toEqual([longThread, longChannel].sort());
    // Its file says which thread it is; one that lost it is not listed under a wrong id.
    rmSync(join(store.threadDir(longThread), "thread-id"));
    expect(store.listThreads()).toEqual([longChannel]);
  });

  it("lists the threads from the directories alone, skipping guppy's own folders and names not of threads", () => {
    const store = createStore({ home });
    store.ensureThreadDir("http:api:one");
    store.ensureThreadDir("slack:C1:1700000000.1");
    store.ensureThreadDir("telegram:-1001");
    store.ensureThreadDir("cli:local:empty name");
    for (const dir of ["skills/greet/scripts", "memory/202611/x", "http/api/100%", "Backup/a/b"])
      mkdirSync(join(home, dir), { recursive: true });
    writeFileSync(join(home, "http/api/notes.txt"), "a file, not a thread");
    expect(store.listThreads().sort()).toEqual([
      "cli:local:empty name",
      "http:api:one",
      "slack:C1:1700000000.1",
      "telegram:-1001:default",
    ]);
  });
});
