import type { AgentMessage } from "@mariozechner/pi-agent-core";
import { afterEach, describe, expect, it } from "vitest";
import type {
  LogCursor,
  LogEntry,
  ThreadLogReader,
  ThreadLogWriter,
} from "../../src/state/types.js";

// The contract of a thread's log and context, for any backend: the file backend runs it here
// (file-thread-log.test.ts), a database backend runs the same cases against its own.

/** One backend under test, fresh and empty. */
export interface ThreadLogHarness {
  reader: ThreadLogReader;
  writer: ThreadLogWriter;
  /**
   * Leaves the thread's log as a crash mid-write would: the start of an entry, never finished
   * (and the writer restarted since).
   * Absent where the backend cannot tear a record (a transaction): that case is skipped.
   */
  tearLog?(threadId: string, partial: string): Promise<void>;
  cleanup(): Promise<void> | void;
}

const T = "slack:C1:100.1";
const SIBLING = "slack:C1:200.2";
const ELSEWHERE = "slack:C2:300.3";

let n = 0;
/** A log entry with a unique message id (`m<n>`) and `text`. */
export function entry(text: string, extra: Partial<LogEntry> = {}): LogEntry {
  n++;
  return {
    date: new Date(Date.UTC(2026, 10, 27, 8, 0, n)).toISOString(),
    messageId: `m${n}`,
    userId: extra.isBot ? "guppy" : "u1",
    userName: extra.isBot ? "guppy" : "alice",
    text,
    isBot: false,
    ...extra,
  };
}

const user = (text: string): AgentMessage => ({ role: "user", content: text, timestamp: 1 });

export function describeThreadLogContract(
  name: string,
  makeImpl: () => Promise<ThreadLogHarness> | ThreadLogHarness,
): void {
  describe(`thread log contract: ${name}`, () => {
    const made: ThreadLogHarness[] = [];
    afterEach(async () => {
      for (const h of made.splice(0)) await h.cleanup();
    });
    const make = async () => {
      const h = await makeImpl();
      made.push(h);
      return h;
    };
    /** Appends `entries` to `threadId` and waits until they are saved. */
    const write = async (h: ThreadLogHarness, threadId: string, entries: LogEntry[]) => {
      for (const e of entries) h.writer.appendLog(threadId, e);
      await h.writer.whenSaved(threadId);
    };
    const all = async (iterable: AsyncIterable<LogEntry>) => {
      const out: LogEntry[] = [];
      for await (const e of iterable) out.push(e);
      return out;
    };

    it("reads a thread that has nothing as empty, every way", async () => {
      const { reader } = await make();
      expect(await reader.readAll(T)).toEqual([]);
      const forward = await reader.readForward(T, { limit: 10 });
      expect(forward.entries).toEqual([]);
      expect(forward.atEnd).toBe(true);
      expect(await reader.readBackward(T, { limit: 10 })).toEqual({
        status: "found",
        entries: [],
        older: null,
      });
      expect(await all(reader.newestFirst(T))).toEqual([]);
      expect(await reader.lastWritten(T)).toBeUndefined();
      expect(await reader.channelThreads(T)).toEqual([]);
      expect(await reader.readContext(T)).toEqual([]);
    });

    it("gives back every field of an entry as written, in order", async () => {
      const h = await make();
      const entries = [
        entry("hello"),
        entry("hi, how can I help?", { isBot: true }),
        entry("see the file", { attachments: [{ original: "a.pdf", local: "attachments/a.pdf" }] }),
        entry("sent from elsewhere", { isBot: true, sentFrom: "telegram:9:default" }),
      ];
      await write(h, T, entries);
      expect(await h.reader.readAll(T)).toEqual(entries);
      expect(await h.reader.lastWritten(T)).toEqual(expect.any(Number));
    });

    it("pages forwards across page borders, and on from the end once the log grows", async () => {
      const h = await make();
      const entries = Array.from({ length: 7 }, (_, i) => entry(`message ${i}`));
      await write(h, T, entries);
      const pages: LogEntry[][] = [];
      let after: LogCursor | undefined;
      for (;;) {
        const page = await h.reader.readForward(T, { limit: 3, ...(after ? { after } : {}) });
        pages.push(page.entries);
        after = page.next;
        if (page.atEnd) break;
      }
      expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
      expect(pages.flat()).toEqual(entries);
      // A page that ends exactly at the log's end says so.
      const exact = await h.reader.readForward(T, { limit: 7 });
      expect(exact.atEnd).toBe(true);
      expect((await h.reader.readForward(T, { limit: 6 })).atEnd).toBe(false);
      // The cursor at the end is where later entries are read from.
      const more = [entry("later 1"), entry("later 2")];
      await write(h, T, more);
      const next = await h.reader.readForward(T, { limit: 10, ...(after ? { after } : {}) });
      expect(next.entries).toEqual(more);
      expect(next.atEnd).toBe(true);
    });

    it("pages backwards from the end by cursor, each page oldest first", async () => {
      const h = await make();
      const entries = Array.from({ length: 7 }, (_, i) => entry(`message ${i}`));
      await write(h, T, entries);
      const first = await h.reader.readBackward(T, { limit: 3 });
      if (first.status !== "found") throw new Error("expected a page");
      expect(first.entries).toEqual(entries.slice(4));
      expect(first.older).not.toBeNull();
      const second = await h.reader.readBackward(T, {
        limit: 3,
        before: { cursor: first.older as LogCursor },
      });
      if (second.status !== "found") throw new Error("expected a page");
      expect(second.entries).toEqual(entries.slice(1, 4));
      const third = await h.reader.readBackward(T, {
        limit: 3,
        before: { cursor: second.older as LogCursor },
      });
      expect(third).toEqual({ status: "found", entries: entries.slice(0, 1), older: null });
      // A page that holds the log's first entry exactly has nothing older.
      const whole = await h.reader.readBackward(T, { limit: 7 });
      expect(whole).toEqual({ status: "found", entries, older: null });
    });

    it("pages backwards from before a message, and says when the message is unknown", async () => {
      const h = await make();
      const entries = Array.from({ length: 5 }, (_, i) => entry(`message ${i}`));
      await write(h, T, entries);
      const page = await h.reader.readBackward(T, {
        limit: 2,
        before: { messageId: entries[3]?.messageId ?? "" },
      });
      if (page.status !== "found") throw new Error("expected a page");
      expect(page.entries).toEqual(entries.slice(1, 3));
      expect(page.older).not.toBeNull();
      expect(
        await h.reader.readBackward(T, { limit: 2, before: { messageId: "no-such-message" } }),
      ).toEqual({ status: "unknown_before" });
    });

    it("leaves out a torn last line, and reads what is appended after it", async (ctx) => {
      const h = await make();
      if (!h.tearLog) return ctx.skip();
      const entries = [entry("one"), entry("two")];
      await write(h, T, entries);
      await h.tearLog(T, '{"date":"2026-11-27T09:00:00.000Z","messageId":"torn","te');
      expect(await h.reader.readAll(T)).toEqual(entries);
      const forward = await h.reader.readForward(T, { limit: 10 });
      expect(forward.entries).toEqual(entries);
      expect(forward.atEnd).toBe(true);
      expect(await h.reader.readBackward(T, { limit: 10 })).toEqual({
        status: "found",
        entries,
        older: null,
      });
      expect(await all(h.reader.newestFirst(T))).toEqual([...entries].reverse());
      const after = entry("three");
      await write(h, T, [after]);
      expect(await h.reader.readAll(T)).toEqual([...entries, after]);
      const next = await h.reader.readForward(T, { limit: 10, after: forward.next });
      expect(next.entries).toEqual([after]);
    });

    it("keeps unicode whole, in entries longer than any read's chunk", async () => {
      const h = await make();
      const entries = [
        entry("Grüße aus Köln — 東京 — مرحبا — e\u0301 — 👩🏽‍💻🐟"),
        entry("🐟".repeat(100_000)), // 400 kB of four-byte characters
        entry("ünï cödé after the long one"),
      ];
      await write(h, T, entries);
      expect(await h.reader.readAll(T)).toEqual(entries);
      expect(await all(h.reader.newestFirst(T))).toEqual([...entries].reverse());
      const pages: LogEntry[] = [];
      let after: LogCursor | undefined;
      for (;;) {
        const page = await h.reader.readForward(T, { limit: 1, ...(after ? { after } : {}) });
        pages.push(...page.entries);
        after = page.next;
        if (page.atEnd) break;
      }
      expect(pages).toEqual(entries);
      const last = await h.reader.readBackward(T, { limit: 2 });
      expect(last).toMatchObject({ status: "found", entries: entries.slice(1) });
    });

    it("reads newest first lazily, and gives every entry the hint lets through", async () => {
      const h = await make();
      const entries = [entry("apples"), entry("pears"), entry("more apples"), entry("plums")];
      await write(h, T, entries);
      const firstTwo: LogEntry[] = [];
      for await (const e of h.reader.newestFirst(T)) {
        firstTwo.push(e);
        if (firstTwo.length === 2) break;
      }
      expect(firstTwo).toEqual([entries[3], entries[2]]);
      const hinted = await all(h.reader.newestFirst(T, { mayMatch: (s) => s.includes("apples") }));
      // The hint may be ignored: every entry it accepts is there, in order.
      expect(hinted.filter((e) => e.text.includes("apples"))).toEqual([entries[2], entries[0]]);
      const stopped = new AbortController();
      stopped.abort();
      expect(await all(h.reader.newestFirst(T, { signal: stopped.signal }))).toEqual([]);
    });

    it("keeps threads apart and lists a channel's threads", async () => {
      const h = await make();
      await write(h, T, [entry("in T")]);
      await write(h, SIBLING, [entry("in the sibling")]);
      await write(h, ELSEWHERE, [entry("in another channel")]);
      await write(h, `${T}~sub-1`, [entry("a subagent's")]);
      expect((await h.reader.readAll(T)).map((e) => e.text)).toEqual(["in T"]);
      expect((await h.reader.readAll(`${T}~sub-1`)).map((e) => e.text)).toEqual(["a subagent's"]);
      expect((await h.reader.channelThreads(T)).sort()).toEqual([T, SIBLING]);
      expect(await h.reader.channelThreads(ELSEWHERE)).toEqual([ELSEWHERE]);
    });

    it("replaces the context at a compaction", async () => {
      const h = await make();
      h.writer.appendContext(T, [user("one"), user("two")]);
      await h.writer.whenSaved(T);
      expect(await h.reader.readContext(T)).toEqual([user("one"), user("two")]);
      h.writer.replaceContext(T, [user("summary")]);
      h.writer.appendContext(T, [user("three")]);
      await h.writer.whenSaved(T);
      expect(await h.reader.readContext(T)).toEqual([user("summary"), user("three")]);
      expect(h.writer.loadContext(T)).toEqual([user("summary"), user("three")]);
    });

    it("archives the context at /new: it is no longer current, the log goes on", async () => {
      const h = await make();
      await write(h, T, [entry("before /new")]);
      h.writer.appendContext(T, [user("old conversation")]);
      await h.writer.whenSaved(T);
      expect(h.writer.archiveContext(T)).toEqual(expect.any(String));
      expect(await h.reader.readContext(T)).toEqual([]);
      expect(h.writer.loadContext(T)).toEqual([]);
      h.writer.appendContext(T, [user("new conversation")]);
      await write(h, T, [entry("after /new")]);
      expect(await h.reader.readContext(T)).toEqual([user("new conversation")]);
      expect((await h.reader.readAll(T)).map((e) => e.text)).toEqual(["before /new", "after /new"]);
      // Nothing to archive: nothing is made.
      expect(h.writer.archiveContext(SIBLING)).toBeUndefined();
    });
  });
}
