import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  createEventBus,
  type EventBus,
  type EventBusReport,
  type EventClock,
} from "../../src/events/create-event-bus.js";
import { openRunsJournal } from "../../src/events/event-runs.js";
import { silentLogger } from "../../src/logging/logger.js";
import type { ActorMessage, SendResult } from "../../src/types.js";
import { tempHome } from "../helpers/temp-home.js";

/** A clock whose time moves only when the test says: the bus's one timer fires as time passes. */
function fakeClock(start: number) {
  let now = start;
  let pending: { fn: () => void; at: number } | undefined;
  const clock: EventClock & { advanceTo(t: number): void } = {
    now: () => now,
    setTimer(fn, ms) {
      pending = { fn, at: now + ms };
      return pending;
    },
    clearTimer(handle) {
      if (pending === handle) pending = undefined;
    },
    advanceTo(t) {
      while (pending && pending.at <= t) {
        const p = pending;
        pending = undefined;
        now = Math.max(now, p.at);
        p.fn();
      }
      now = t;
    },
  };
  return clock;
}

/** The orchestrator's front door as the bus sees it: records each prompt and queues it. */
function recorder() {
  const sent: Array<{ threadId: string; message: ActorMessage; at: number }> = [];
  let clock: EventClock | undefined;
  return {
    sent,
    use(c: EventClock) {
      clock = c;
    },
    orchestrator: {
      send(threadId: string, message: ActorMessage): SendResult {
        sent.push({ threadId, message, at: clock?.now() ?? Date.now() });
        return { status: "queued", inboxId: `i${sent.length}`, position: 0 };
      },
      async sendToChannel() {
        return undefined;
      },
    },
  };
}

const homes: Array<ReturnType<typeof tempHome>> = [];
const buses: EventBus[] = [];
afterEach(() => {
  for (const b of buses.splice(0)) b.stop();
  for (const h of homes.splice(0)) h.cleanup();
});

function setup(start: number) {
  const h = tempHome();
  homes.push(h);
  mkdirSync(join(h.home, "events"), { recursive: true });
  const clock = fakeClock(start);
  const rec = recorder();
  rec.use(clock);
  const reports: EventBusReport[] = [];
  const bus = async () => {
    const b = createEventBus({
      home: h.home,
      orchestrator: rec.orchestrator,
      clock,
      logger: silentLogger,
      report: (r) => reports.push(r),
    });
    buses.push(b);
    await b.start();
    return b;
  };
  return { ...h, clock, rec, reports, bus };
}

const berlinDay = (ms: number) =>
  new Intl.DateTimeFormat("en-CA", { timeZone: "Europe/Berlin" }).format(new Date(ms));

describe("event bus with an injected clock", () => {
  it.each([
    ["spring forward", "2026-03-27T12:00:00Z", "2026-03-31T12:00:00Z", "2026-03-29"],
    ["fall back", "2026-10-23T12:00:00Z", "2026-10-27T12:00:00Z", "2026-10-25"],
  ])(
    "fires a daily 30 2 * * * in Europe/Berlin exactly once on the %s day",
    async (_name, from, to, day) => {
      const t = setup(Date.parse(from));
      t.write(
        "events/nightly.json",
        JSON.stringify({
          type: "periodic",
          threadId: "cli:local:default",
          text: "nightly check",
          schedule: "30 2 * * *",
          timezone: "Europe/Berlin",
        }),
      );
      await t.bus();
      t.clock.advanceTo(Date.parse(to));
      const days = t.rec.sent.map((s) => berlinDay(s.at));
      // Four days, four firings, one a day, the transition day included.
      expect(days).toHaveLength(4);
      expect(new Set(days).size).toBe(4);
      expect(days.filter((d) => d === day)).toHaveLength(1);
      const first = t.rec.sent[0]?.message;
      expect(first).toMatchObject({
        type: "prompt",
        text: '[scheduled event "nightly"] nightly check',
        origin: { kind: "event", name: "nightly" },
      });
    },
  );

  it("fires a one-shot at its time, not before, once, and removes its file", async () => {
    const start = Date.parse("2026-11-27T10:00:00Z");
    const t = setup(start);
    const file = t.write(
      "events/remind.json",
      JSON.stringify({
        type: "one-shot",
        threadId: "http:api:default",
        text: "stretch",
        schedule: "2026-11-27T10:05:00Z",
      }),
    );
    const bus = await t.bus();
    expect(bus.eventsOf("http:api")).toEqual([
      expect.objectContaining({
        id: "remind",
        type: "one-shot",
        nextRun: "2026-11-27T10:05:00.000Z",
      }),
    ]);
    t.clock.advanceTo(start + 4 * 60_000 + 59_999);
    expect(t.rec.sent).toHaveLength(0);
    t.clock.advanceTo(start + 10 * 60_000);
    expect(t.rec.sent).toHaveLength(1);
    expect(t.rec.sent[0]?.at).toBe(Date.parse("2026-11-27T10:05:00Z"));
    expect(existsSync(file)).toBe(false);
    expect(bus.eventsOf("http:api")).toEqual([]);
  });

  it("fires a one-shot whose time passed while down once at start, marked late", async () => {
    const t = setup(Date.parse("2026-11-27T10:00:00Z"));
    t.write(
      "events/late.json",
      JSON.stringify({
        type: "one-shot",
        threadId: "cli:local:default",
        text: "call mum",
        schedule: "2026-11-27T09:00:00",
        timezone: "UTC",
      }),
    );
    await t.bus();
    t.clock.advanceTo(Date.parse("2026-11-27T10:00:00.001Z"));
    expect(t.rec.sent).toHaveLength(1);
    const message = t.rec.sent[0]?.message as ActorMessage & { origin?: unknown; text: string };
    expect(message.origin).toEqual({ kind: "event", name: "late", late: true });
    expect(message.text).toMatch(
      /^\[scheduled event "late", late: it was due 2026-11-27 09:00:00 UTC\] call mum$/,
    );
    expect(t.reports).toContainEqual(
      expect.objectContaining({ type: "fired", id: "late", late: true }),
    );
  });

  it("never sends a slot the runs journal has, even when its file is still there (kill -9 before the removal)", async () => {
    const t = setup(Date.parse("2026-11-27T10:00:00Z"));
    const body = JSON.stringify({
      type: "one-shot",
      threadId: "cli:local:default",
      text: "once",
      schedule: "2026-11-27T09:59:00Z",
    });
    t.write("events/once.json", body);
    const first = await t.bus();
    t.clock.advanceTo(Date.parse("2026-11-27T10:00:01Z"));
    expect(t.rec.sent).toHaveLength(1);
    first.stop();
    // The process died after the journal line, before the file went: it is back at the next start.
    const file = t.write("events/once.json", body);
    await t.bus();
    t.clock.advanceTo(Date.parse("2026-11-27T10:01:00Z"));
    expect(t.rec.sent).toHaveLength(1);
    expect(existsSync(file)).toBe(false);
    const lines = readFileSync(join(t.home, "events/.runs.jsonl"), "utf8").trim().split("\n");
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({
        id: "once",
        status: "firing",
        slot: Date.parse("2026-11-27T09:59:00Z"),
      }),
    ]);
  });

  it("records a periodic event's slots missed while down and does not replay them", async () => {
    const start = Date.parse("2026-11-27T10:00:00Z");
    const t = setup(start);
    t.write(
      "events/tick.json",
      JSON.stringify({
        type: "periodic",
        threadId: "cli:local:default",
        text: "tick",
        schedule: "* * * * *",
      }),
    );
    const first = await t.bus();
    t.clock.advanceTo(start + 60_000);
    expect(t.rec.sent).toHaveLength(1);
    first.stop();
    // Down for ten minutes: ten slots pass unseen.
    t.clock.advanceTo(start + 11 * 60_000 + 30_000);
    await t.bus();
    expect(t.rec.sent).toHaveLength(1);
    expect(t.reports).toContainEqual({
      type: "missed",
      id: "tick",
      count: 10,
      last: start + 11 * 60_000,
    });
    t.clock.advanceTo(start + 12 * 60_000);
    expect(t.rec.sent).toHaveLength(2);
    expect(t.rec.sent[1]?.at).toBe(start + 12 * 60_000);
    const journal = openRunsJournal(join(t.home, "events/.runs.jsonl"), silentLogger);
    expect(journal.lastSlot("tick")).toBe(start + 12 * 60_000);
    journal.close();
    const records = readFileSync(join(t.home, "events/.runs.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(records).toContainEqual(expect.objectContaining({ status: "missed", count: 10 }));
    // Compacted at the restart to the last line per event: the missed one, then the new firing.
    expect(records.filter((r) => r.status === "firing")).toEqual([
      expect.objectContaining({ slot: start + 12 * 60_000 }),
    ]);
  });

  it("fires an immediate file once and removes it", async () => {
    const start = Date.parse("2026-11-27T10:00:00Z");
    const t = setup(start);
    const file = t.write(
      "events/now.json",
      JSON.stringify({ type: "immediate", threadId: "cli:local:default", text: "hello" }),
    );
    await t.bus();
    t.clock.advanceTo(start + 1);
    expect(t.rec.sent).toHaveLength(1);
    expect(existsSync(file)).toBe(false);
    t.clock.advanceTo(start + 10_000);
    expect(t.rec.sent).toHaveLength(1);
  });

  it("sends the text its file holds when it fires, and skips a slot whose file does not read", async () => {
    const start = Date.parse("2026-11-27T10:00:00Z");
    const t = setup(start);
    const periodic = (text: string) =>
      JSON.stringify({
        type: "periodic",
        threadId: "cli:local:default",
        text,
        schedule: "* * * * *",
      });
    const file = t.write("events/tick.json", periodic("first text"));
    await t.bus();
    // The bus keeps no text: a rewrite is what fires, even before the watcher reads it again.
    writeFileSync(file, periodic("second text"));
    t.clock.advanceTo(start + 60_000);
    expect(t.rec.sent.map((s) => (s.message as { text: string }).text)).toEqual([
      '[scheduled event "tick"] second text',
    ]);
    // Half-written when its slot comes: not sent, not recorded (it fires once it reads), and
    // the next slot is set.
    writeFileSync(file, '{"type": "periodic", "threadId": "cli:local:def');
    t.clock.advanceTo(start + 120_000);
    expect(t.rec.sent).toHaveLength(1);
    expect(t.reports).toContainEqual(
      expect.objectContaining({ type: "skipped", id: "tick", slot: start + 120_000 }),
    );
    const journal = openRunsJournal(join(t.home, "events/.runs.jsonl"), silentLogger);
    expect(journal.lastSlot("tick")).toBe(start + 60_000);
    journal.close();
    writeFileSync(file, periodic("third text"));
    t.clock.advanceTo(start + 180_000);
    expect(t.rec.sent.map((s) => (s.message as { text: string }).text)).toEqual([
      '[scheduled event "tick"] second text',
      '[scheduled event "tick"] third text',
    ]);
  });

  it("keeps the journal to a line per event when it grows", async () => {
    const start = Date.parse("2026-11-27T10:00:00Z");
    const t = setup(start);
    t.write(
      "events/fast.json",
      JSON.stringify({
        type: "periodic",
        threadId: "cli:local:default",
        text: "f",
        schedule: "* * * * * *",
      }),
    );
    await t.bus();
    t.clock.advanceTo(start + 1200 * 1000);
    expect(t.rec.sent).toHaveLength(1200);
    const lines = readFileSync(join(t.home, "events/.runs.jsonl"), "utf8").trim().split("\n");
    expect(lines.length).toBeLessThan(1100);
    // No slot twice.
    const ids = new Set(t.rec.sent.map((s) => (s.message as { messageId?: string }).messageId));
    expect(ids.size).toBe(1200);
  });
});

describe("runs journal", () => {
  it("reads back the last slot per event, skipping a torn line", async () => {
    const h = tempHome();
    homes.push(h);
    const path = join(h.home, "events/.runs.jsonl");
    const j = openRunsJournal(path, silentLogger);
    j.record([{ id: "a", slot: 10, status: "firing", at: 1 }]);
    j.record([
      { id: "a", slot: 20, status: "firing", at: 2 },
      { id: "b", slot: 5, status: "missed", at: 3, count: 2 },
    ]);
    j.close();
    writeFileSync(path, `${readFileSync(path, "utf8")}{"id":"a","slot":3`);
    const again = openRunsJournal(path, silentLogger);
    expect(again.lastSlot("a")).toBe(20);
    expect(again.lastSlot("b")).toBe(5);
    expect(again.lastSlot("c")).toBeUndefined();
    again.compact((r) => r.id === "a");
    again.close();
    expect(readFileSync(path, "utf8").trim().split("\n")).toHaveLength(1);
  });
});
