import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createOrchestrator, createStore } from "@guppy/core";
import { createFileThreadLog, type ThreadLogReader } from "@guppy/core/state";
import { LOG_FILE, threadDirOf } from "@guppy/core/thread-layout";
import { afterEach, describe, expect, it } from "vitest";
import { createHttpApp } from "../../../src/channels/http/create-http-app.js";
import { createLocalBackend } from "../../../src/channels/http/http-backend.js";
import {
  createThreadTitles,
  TITLE_CHARS,
  TITLE_SCAN_ENTRIES,
  titleText,
} from "../../../src/channels/http/thread-titles.js";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function tempHome(): string {
  const home = mkdtempSync(join(tmpdir(), "guppy-titles-"));
  cleanups.push(() => rmSync(home, { recursive: true, force: true }));
  return home;
}

const line = (text: string, isBot: boolean, n = 1) =>
  `${JSON.stringify({
    date: "2026-01-01T00:00:00.000Z",
    messageId: `m${n}`,
    userId: isBot ? "guppy" : "u",
    userName: isBot ? "guppy" : "u",
    text,
    isBot,
  })}\n`;

/** Writes `lines` as thread `id`'s log.jsonl under `home`; returns the log's path. */
function writeLog(home: string, id: string, lines: string[]): string {
  const dir = threadDirOf(home, id);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, LOG_FILE);
  writeFileSync(path, lines.join(""));
  return path;
}

describe("titleText", () => {
  it("keeps the first words on one line and marks a cut", () => {
    expect(titleText("  Plan\nthe   trip  ")).toBe("Plan the trip");
    expect(titleText("one two three four five six seven eight nine ten eleven")).toBe(
      "one two three four five six seven eight nine ten…",
    );
    const long = titleText("x".repeat(500));
    expect(long.length).toBe(TITLE_CHARS);
    expect(long.endsWith("…")).toBe(true);
  });
});

describe("thread titles", () => {
  it("are the first user message's words, skipping guppy's own lines and torn ones", async () => {
    const home = tempHome();
    writeLog(home, "telegram:1:default", [
      line("Hello, I am guppy", true, 1),
      "{not json\n",
      line("What is the weather in Lisbon tomorrow?", false, 2),
      line("Later message", false, 3),
    ]);
    const titles = createThreadTitles(createFileThreadLog(home));
    expect(await titles.titles(["telegram:1:default"])).toEqual([
      "What is the weather in Lisbon tomorrow?",
    ]);
  });

  it("are null without a user message, found once one is written, then kept", async () => {
    const home = tempHome();
    const id = "http:web:new";
    const dir = threadDirOf(home, id);
    const path = join(dir, LOG_FILE);
    let reads = 0;
    const log = createFileThreadLog(home);
    const titles = createThreadTitles({
      readForward: (...args: Parameters<ThreadLogReader["readForward"]>) => {
        reads++;
        return log.readForward(...args);
      },
    });
    expect(await titles.titles([id])).toEqual([null]); // no log at all yet
    writeLog(home, id, [line("a heartbeat note", true, 1)]);
    expect(await titles.titles([id])).toEqual([null]);
    appendFileSync(path, line("first question", false, 2));
    expect(await titles.titles([id])).toEqual(["first question"]);
    const before = reads;
    // Kept: the log is not looked at again, even when it is gone.
    rmSync(path);
    expect(await titles.titles([id])).toEqual(["first question"]);
    expect(reads).toBe(before);
  });

  it("read only the log's start: a user message past it gives no title", async () => {
    const home = tempHome();
    const bot = line("b".repeat(1000), true);
    const lines = Array.from({ length: TITLE_SCAN_ENTRIES }, () => bot);
    const path = writeLog(home, "slack:C1:1", lines);
    const titles = createThreadTitles(createFileThreadLog(home));
    expect(await titles.titles(["slack:C1:1"])).toEqual([null]);
    // Read on from where it stopped: past the start, a user message gives no title.
    appendFileSync(path, line("too far down", false));
    expect(await titles.titles(["slack:C1:1"])).toEqual([null]);
  });

  it("come with GET /v1/threads and the thread's status, read from the home's logs", async () => {
    const home = tempHome();
    const store = createStore({ home });
    writeLog(home, "http:web:a", [line("Summarise my notes please", false)]);
    writeLog(home, "http:web:b", [line("only guppy spoke", true)]);
    const orchestrator = createOrchestrator({
      store,
      maxConcurrent: 1,
      queueDepth: 1,
      idleTimeoutMs: 60_000,
      createRunner: () => {
        throw new Error("no runs here");
      },
    });
    const backend = createLocalBackend({ orchestrator, store });
    const token = "a-token-of-some-length";
    const app = createHttpApp({ backend, token, tokenHint: "t", modelName: "m" });
    const get = async (path: string) =>
      (await (
        await app.request(path, { headers: { authorization: `Bearer ${token}` } })
      ).json()) as Record<string, unknown>;
    const list = (await get("/v1/threads")) as { threads: Array<{ id: string; title: unknown }> };
    expect(list.threads.map((t) => [t.id, t.title])).toEqual([
      ["http:web:a", "Summarise my notes please"],
      ["http:web:b", null],
    ]);
    expect((await get("/v1/threads/http:web:a/status")).title).toBe("Summarise my notes please");
    const unauthenticated = await app.request("/v1/threads");
    expect(unauthenticated.status).toBe(401);
  });
});
