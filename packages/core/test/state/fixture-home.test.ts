import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openRunsJournal, RUNS_FILE } from "../../src/events/event-runs.js";
import { readJsonl } from "../../src/fs/jsonl.js";
import { createLastChannel } from "../../src/heartbeat/last-channel.js";
import { INBOX_FILE } from "../../src/inbox/create-inbox.js";
import { isInboxRecord } from "../../src/inbox/inbox-record.js";
import { silentLogger } from "../../src/logging/logger.js";
import { readCursor } from "../../src/orchestrator/backfill.js";
import { createFileThreadLog } from "../../src/state/file-thread-log.js";
import type {
  ApprovedUser,
  FollowedThread,
  InboxRecord,
  Invite,
  LogCursor,
  LogEntry,
  PendingPairing,
  ThreadLogReader,
  UsageRecord,
  Welcome,
} from "../../src/state/types.js";
import { createStore } from "../../src/store/create-store.js";
import { foldUsageLedger, USAGE_FILE } from "../../src/usage/usage-ledger.js";

// A home the current release wrote (fixtures/make-home.mjs ran its code; the files are committed
// as it left them), opened through the state seam: a later release and any other backend's
// importer must read every record of it. Read from a copy, so no test changes the fixture.

const TELEGRAM = "telegram:4242:default";
const CHILD = `${TELEGRAM}~sub-1`;
const SLACK_A = "slack:C0PEOPLE:1764230400.000100";
const SLACK_B = "slack:C0PEOPLE:1764230500.000200";
const LONG = `http:api:${"a-very-long-thread-name-".repeat(6)}end`;

let home: string;
let reader: ThreadLogReader;
beforeAll(() => {
  home = mkdtempSync(join(tmpdir(), "guppy-fixture-home-"));
  cpSync(fileURLToPath(new URL("./fixtures/home", import.meta.url)), home, { recursive: true });
  reader = createFileThreadLog(home);
});
afterAll(() => rmSync(home, { recursive: true, force: true }));

const texts = (entries: LogEntry[]) => entries.map((e) => e.text);

describe("a home written by the current release, read through the state seam", () => {
  it("reads a thread's log whole, past its torn line, with every field", async () => {
    const log = await reader.readAll(TELEGRAM);
    expect(texts(log)).toEqual([
      "What is on my calendar today? 📅",
      "Nothing before noon.",
      "Here is the agenda",
      "Standup at nine.",
      "Sent from the API thread",
      "Thanks! 🐟",
    ]);
    expect(log[2]?.attachments).toEqual([
      { original: "agenda.pdf", local: "attachments/msg-3-agenda.pdf" },
    ]);
    expect(log[4]).toMatchObject({ isBot: true, sentFrom: "http:api:default" });
    expect(log[0]).toEqual({
      date: "2026-11-27T08:00:00.000Z",
      messageId: "msg-1",
      userId: "4242",
      userName: "Alice",
      text: "What is on my calendar today? 📅",
      isBot: false,
    });
    expect(await reader.lastWritten(TELEGRAM)).toEqual(expect.any(Number));
  });

  it("pages the log forwards and backwards", async () => {
    const all = await reader.readAll(TELEGRAM);
    const forward: LogEntry[] = [];
    let after: LogCursor | undefined;
    for (;;) {
      const page = await reader.readForward(TELEGRAM, { limit: 4, ...(after ? { after } : {}) });
      forward.push(...page.entries);
      after = page.next;
      if (page.atEnd) break;
    }
    expect(forward).toEqual(all);
    const newest = await reader.readBackward(TELEGRAM, { limit: 2 });
    expect(newest).toMatchObject({ status: "found", entries: all.slice(4) });
    const before = await reader.readBackward(TELEGRAM, {
      limit: 10,
      before: { messageId: "msg-3" },
    });
    expect(before).toEqual({ status: "found", entries: all.slice(0, 2), older: null });
  });

  it("reads the current context only: the compaction first, /new's archive left out", async () => {
    const context = await reader.readContext(TELEGRAM);
    expect(context.map((m) => m.role)).toEqual(["compaction", "assistant"]);
    expect(context[0]).toMatchObject({ summary: "Alice shared her agenda; standup is at 09:00." });
    const slack = await reader.readContext(SLACK_A);
    expect(slack.map((m) => m.role)).toEqual(["user", "assistant"]);
  });

  it("reads a subagent's log, a channel's threads and a thread with a shortened folder", async () => {
    expect(texts(await reader.readAll(CHILD))).toEqual([
      "Summarise the agenda",
      "One standup, at nine.",
    ]);
    expect((await reader.channelThreads(SLACK_A)).sort()).toEqual([SLACK_A, SLACK_B]);
    expect(await reader.channelThreads(TELEGRAM)).toEqual([TELEGRAM]);
    expect(await reader.channelThreads(LONG)).toEqual([LONG]);
    expect(texts(await reader.readAll(LONG))).toEqual([
      "A thread of the HTTP API with a long name",
      "Noted.",
    ]);
  });

  // Not behind the seam yet: read by today's readers, as the seam's record types.
  it("reads the thread's status and backfill cursor", () => {
    const store = createStore({ home });
    expect(store.readStatus(TELEGRAM)).toMatchObject({ messages: 3, compactions: 1 });
    expect(readCursor(store, TELEGRAM)).toEqual({ count: 5 });
    expect(store.listThreads().sort()).toEqual([LONG, SLACK_A, SLACK_B, TELEGRAM].sort());
  });

  it("reads the inbox journal, the usage ledger and the event slots", () => {
    const inbox: InboxRecord[] = readJsonl(join(home, INBOX_FILE), silentLogger, isInboxRecord);
    expect(inbox.map((r) => r.t)).toEqual([
      "accepted",
      "tool",
      "done",
      "accepted",
      "done",
      "ran",
      "cleared",
      "accepted",
      "tool",
    ]);
    expect(inbox[3]).toMatchObject({ role: "guest", threadId: SLACK_A });
    expect(inbox[7]).toMatchObject({ origin: { kind: "event", name: "digest.json" } });

    const usage: UsageRecord[] = [];
    expect(foldUsageLedger(join(home, USAGE_FILE), 0, (r) => usage.push(r))).toMatchObject({
      skipped: 0,
    });
    expect(usage.map((r) => [r.thread, r.cost, r.subscription ?? false])).toEqual([
      [TELEGRAM, 0.0021, false],
      [CHILD, 0, true],
    ]);

    const runs = openRunsJournal(join(home, "events", RUNS_FILE), silentLogger);
    expect(runs.lastSlot("digest.json")).toBe(Date.UTC(2026, 10, 27, 8, 30));
    expect(runs.lastSlot("hourly.json")).toBe(Date.UTC(2026, 10, 27, 8, 0));
    expect(runs.lastSlot("ping.json")).toBe(Date.UTC(2026, 10, 27, 8, 41));
    runs.close();
  });

  it("reads access records and the small records", () => {
    const json = <T>(path: string): T => JSON.parse(readFileSync(join(home, path), "utf8")) as T;
    expect(json<ApprovedUser[]>("access/telegram/approved.json").map((u) => u.role)).toEqual([
      "owner",
      "guest",
    ]);
    expect(json<PendingPairing[]>("access/telegram/pending.json")[0]?.code).toBe("K7Q2XM");
    expect(json<Invite[]>("access/slack/invites.json")[0]?.role).toBe("guest");
    expect(json<Welcome>("access/telegram/welcome/77.json").userName).toBe("Bob");
    const chatOnTelegram = { chat: ["telegram"], fallback: [] };
    expect(createLastChannel(home, silentLogger, chatOnTelegram).get()).toBe(TELEGRAM);
    expect(json<FollowedThread[]>("subscriptions.json").map((f) => f.threadId)).toEqual([SLACK_A]);
  });
});
