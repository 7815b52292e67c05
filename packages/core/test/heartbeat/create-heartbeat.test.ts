import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseActiveHours } from "../../src/heartbeat/active-hours.js";
import { createHeartbeat, type HeartbeatOptions } from "../../src/heartbeat/create-heartbeat.js";
import { HEARTBEAT_FILE } from "../../src/heartbeat/heartbeat-file.js";
import {
  createLastChannel,
  type HeartbeatAdapters,
  heartbeatThread,
  LAST_CHANNEL_FILE,
  recordLastChannel,
} from "../../src/heartbeat/last-channel.js";
import { silentLogger } from "../../src/logging/logger.js";
import type { RuntimeOrchestrator } from "../../src/orchestrator/types.js";
import { recordingHandle, until, useOrchestratorHarness } from "../orchestrator/harness.js";

/** The app's chat channels and fallbacks (guppy's registry derives them from its channels). */
const adapters: HeartbeatAdapters = {
  chat: ["telegram", "slack", "discord"],
  fallback: ["http", "cli"],
};

describe("heartbeat (real orchestrator, faux model)", () => {
  const h = useOrchestratorHarness();

  const heartbeatOn = (o: RuntimeOrchestrator, overrides: Partial<HeartbeatOptions> = {}) =>
    createHeartbeat({
      home: h.home,
      intervalSeconds: 1,
      orchestrator: o,
      subscribe: o.subscribe,
      lastChannel: createLastChannel(h.home, silentLogger, adapters),
      logger: silentLogger,
      ...overrides,
    });

  /** An owner's prompt on a Telegram thread, through the recording front door; waits for its answer. */
  const chat = async (
    o: RuntimeOrchestrator,
    threadId: string,
    text: string,
    role?: "guest",
    last = createLastChannel(h.home, silentLogger, adapters),
  ) => {
    const t = recordingHandle(threadId);
    const front = recordLastChannel(o, last);
    front.send(threadId, { type: "prompt", text, thread: t.handle, ...(role ? { role } : {}) });
    await until(() => t.finals().length === 1);
  };

  const lastChannelFile = () => {
    try {
      return JSON.parse(readFileSync(join(h.home, LAST_CHANNEL_FILE), "utf8")).threadId as string;
    } catch {
      return undefined;
    }
  };

  it("records the owner's last chat thread on disk; a guest's prompt or an HTTP one does not move it", async () => {
    const o = await h.started();
    await chat(o, "telegram:1:default", "hi");
    expect(lastChannelFile()).toBe("telegram:1:default");
    await chat(o, "telegram:2:default", "I am a guest", "guest");
    await chat(o, "http:api:x", "from the API");
    expect(lastChannelFile()).toBe("telegram:1:default");
    await chat(o, "slack:C1:t1", "on slack now");
    // A new process reads it back.
    expect(createLastChannel(h.home, silentLogger, adapters).get()).toBe("slack:C1:t1");
  });

  it("falls back to the most recent HTTP or terminal thread, never a subagent's", async () => {
    const o = await h.started();
    await chat(o, "cli:local:one", "first");
    await chat(o, "http:api:two", "second");
    await chat(o, "http:api:two~sub-1", "a child");
    await chat(o, "test:c:other", "another adapter");
    const last = createLastChannel(h.home, silentLogger, adapters);
    expect(heartbeatThread(last, () => o.threads())).toBe("http:api:two");
    last.record("discord:g:c");
    expect(heartbeatThread(last, () => o.threads())).toBe("discord:g:c");
  });

  it("makes no model request when HEARTBEAT.md is missing or holds only comments and headings", async () => {
    const o = await h.started();
    await chat(o, "telegram:1:default", "hi");
    const beat = heartbeatOn(o);
    expect(beat.beat()).toMatchObject({ ran: false, reason: "nothing_actionable" });
    writeFileSync(join(h.home, HEARTBEAT_FILE), "# Heartbeat\n<!-- - check mail -->\n");
    expect(beat.beat()).toMatchObject({ ran: false, reason: "nothing_actionable" });
    await new Promise((r) => setTimeout(r, 100));
    expect(h.requests).toEqual(["hi"]);
  });

  it("makes no model request outside GUPPY_HEARTBEAT_HOURS, across midnight too", async () => {
    const o = await h.started();
    await chat(o, "telegram:1:default", "hi");
    writeFileSync(join(h.home, HEARTBEAT_FILE), "- check mail\n");
    const hours = parseActiveHours("22:00-06:00");
    const noon = heartbeatOn(o, {
      hours,
      timeZone: "UTC",
      now: () => new Date("2026-11-27T12:00:00Z"),
    });
    expect(noon.beat()).toMatchObject({ ran: false, reason: "outside_hours" });
    await new Promise((r) => setTimeout(r, 100));
    expect(h.requests).toEqual(["hi"]);
    const night = heartbeatOn(o, {
      hours,
      timeZone: "UTC",
      now: () => new Date("2026-11-27T01:30:00Z"),
    });
    expect(night.beat()).toMatchObject({ ran: true, threadId: "telegram:1:default" });
    await until(() => h.requests.length === 2);
  });

  it("runs the checklist in the owner's thread as a heartbeat, one beat at a time, and never moves the record", async () => {
    const o = await h.started();
    const lastChannel = createLastChannel(h.home, silentLogger, adapters);
    const front = recordLastChannel(o, lastChannel);
    await chat(o, "telegram:1:default", "hi", undefined, lastChannel);
    // "gate": the faux model calls the gate tool, which holds the run until the test opens it.
    writeFileSync(join(h.home, HEARTBEAT_FILE), "- open the gate\n");
    const beat = heartbeatOn(front, { lastChannel });
    const first = beat.beat();
    expect(first).toMatchObject({ ran: true, threadId: "telegram:1:default" });
    await h.gate.entered();
    expect(beat.beat()).toMatchObject({ ran: false, reason: "previous_running" });
    expect(beat.beat()).toMatchObject({ ran: false, reason: "previous_running" });
    h.gate.open();
    await until(() => o.status("telegram:1:default").state !== "running");
    await until(() => h.store.readLog("telegram:1:default").length === 4);
    const log = h.store.readLog("telegram:1:default");
    expect(log[2]).toMatchObject({ userName: "heartbeat", isBot: false });
    expect(log[2]?.text).toContain("- open the gate");
    expect(log[2]?.text).toContain("HEARTBEAT_OK");
    expect(lastChannelFile()).toBe("telegram:1:default");

    h.gate.reset();
    h.gate.open();
    expect(beat.beat()).toMatchObject({ ran: true });
    await until(() => h.store.readLog("telegram:1:default").length === 6);
    // The heartbeat's prompts went through the recording front door and did not move it.
    await chat(o, "slack:C:t", "elsewhere", undefined, lastChannel);
    expect(lastChannelFile()).toBe("slack:C:t");
    expect(beat.beat()).toMatchObject({ ran: true, threadId: "slack:C:t" });
    await until(() => h.store.readLog("slack:C:t").length === 4);
    expect(lastChannelFile()).toBe("slack:C:t");
  });

  it("skips a beat when no thread of the owner exists yet", async () => {
    const o = await h.started();
    writeFileSync(join(h.home, HEARTBEAT_FILE), "- check mail\n");
    expect(heartbeatOn(o).beat()).toMatchObject({ ran: false, reason: "no_thread" });
    expect(h.requests).toEqual([]);
  });
});
