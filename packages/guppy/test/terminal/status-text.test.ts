import type { ThreadStatus } from "@guppy/core";
import { describe, expect, it } from "vitest";
import { statusText as chatStatusText } from "../../src/channels/bridge/chat-commands.js";
import { lastActivityText, statusText } from "../../src/terminal/status-text.js";

const status: ThreadStatus = {
  threadId: "cli:local:default",
  state: "idle",
  queued: 0,
  model: "openai/mock-gpt",
  messages: 4,
  contextTokens: 1200,
  contextWindow: 128_000,
  compactions: 0,
  cost: 0.0123,
};

/** /status in the terminal and in a chat: where the tools run, when the orchestrator knows. */
describe("/status and the sandbox", () => {
  it("prints the sandbox line in the terminal's report", () => {
    const text = statusText({ ...status, sandbox: "bubblewrap (workspace rw, home hidden)" });
    expect(text.split("\n").at(-1)).toBe("sandbox      bubblewrap (workspace rw, home hidden)");
    expect(text).toContain("model        openai/mock-gpt");
  });

  it("prints it in a chat's /status reply too", () => {
    const text = chatStatusText({ ...status, sandbox: "host (no sandbox: bwrap not found)" });
    expect(text.split("\n").at(-1)).toBe("Sandbox: host (no sandbox: bwrap not found)");
  });

  it("prints no sandbox line when none was given", () => {
    expect(statusText(status)).not.toMatch(/sandbox/i);
    expect(chatStatusText(status)).not.toMatch(/sandbox/i);
  });
});

describe("/status and subagents", () => {
  const subagents: ThreadStatus["subagents"] = [
    { id: "cli:local:default~sub-1", label: "finder", state: "running" },
    { id: "cli:local:default~sub-2", state: "done" },
  ];

  it("lists a thread's subagents in the terminal and in a chat", () => {
    expect(
      statusText({ ...status, subagents })
        .split("\n")
        .slice(-2),
    ).toEqual([
      'subagents    cli:local:default~sub-1 "finder": running',
      "             cli:local:default~sub-2: done",
    ]);
    expect(
      chatStatusText({ ...status, subagents })
        .split("\n")
        .at(-1),
    ).toBe('Subagents: cli:local:default~sub-1 "finder" running, cli:local:default~sub-2 done');
    expect(statusText(status)).not.toMatch(/subagents/);
  });
});

/** /status lists the thread's scheduled events (issue 34), in the terminal and in a chat. */
describe("/status and scheduled events", () => {
  const events: ThreadStatus["events"] = [
    { id: "mail", type: "periodic", schedule: "0 9 * * 1-5", nextRun: "2026-11-30T08:00:00.000Z" },
    {
      id: "call-mum",
      type: "one-shot",
      schedule: "2026-12-01T09:00:00",
      nextRun: "2026-12-01T08:00:00.000Z",
    },
  ];

  it("prints one line per event in the terminal's report", () => {
    const lines = statusText({ ...status, events }).split("\n");
    expect(lines.slice(-2)).toEqual([
      "events       mail  periodic 0 9 * * 1-5  next 2026-11-30T08:00:00.000Z",
      "             call-mum  one-shot 2026-12-01T09:00:00  next 2026-12-01T08:00:00.000Z",
    ]);
  });

  it("prints them in a chat's /status reply, and nothing when there are none", () => {
    expect(
      chatStatusText({ ...status, events })
        .split("\n")
        .slice(-2),
    ).toEqual([
      "Event: mail  periodic 0 9 * * 1-5  next 2026-11-30T08:00:00.000Z",
      "Event: call-mum  one-shot 2026-12-01T09:00:00  next 2026-12-01T08:00:00.000Z",
    ]);
    expect(statusText(status)).not.toMatch(/event/i);
    expect(chatStatusText(status)).not.toMatch(/event/i);
  });
});

describe("/status and the last activity", () => {
  const now = Date.parse("2026-11-27T15:30:00Z");

  it("says when the thread last had a message or a run, and how long ago", () => {
    expect(lastActivityText("2026-11-27T15:18:10.000Z", now)).toBe(
      "2026-11-27 15:18 UTC (11 min ago)",
    );
    expect(lastActivityText("2026-11-27T15:29:40.000Z", now)).toBe(
      "2026-11-27 15:29 UTC (just now)",
    );
    expect(lastActivityText("2026-11-27T09:00:00.000Z", now)).toBe(
      "2026-11-27 09:00 UTC (6 h ago)",
    );
    expect(lastActivityText("2026-11-20T09:00:00.000Z", now)).toBe(
      "2026-11-20 09:00 UTC (7 days ago)",
    );
    expect(lastActivityText(undefined, now)).toBe("never");
  });

  it("is a line of the terminal's and the chat's /status", () => {
    const lastActivity = new Date(Date.now() - 5 * 60_000).toISOString();
    expect(statusText({ ...status, lastActivity })).toMatch(
      /^last active {2}\S+ \S+ UTC \(5 min ago\)$/m,
    );
    expect(chatStatusText({ ...status, lastActivity })).toMatch(
      /^Last activity: .* UTC \(5 min ago\)$/m,
    );
    expect(chatStatusText(status)).toContain("Last activity: never");
  });
});

/** /status's totals from the usage ledger: the thread's across /new, and today's of every thread. */
describe("/status and the usage ledger", () => {
  const usage: ThreadStatus["usage"] = {
    thread: {
      requests: 12,
      input: 34_567,
      cacheRead: 2_000,
      cacheWrite: 100,
      output: 890,
      cost: 0.4567,
      subscription: 0,
    },
    today: {
      requests: 3,
      input: 1_000,
      cacheRead: 0,
      cacheWrite: 0,
      output: 50,
      cost: 0,
      subscription: 3,
    },
  };

  it("prints the thread's total and today's in the terminal, a subscription's as no spend", () => {
    const lines = statusText({ ...status, usage }).split("\n");
    expect(lines).toContain(
      "thread total 12 requests, 34,567 in, 2,000 cached read, 100 cache write, 890 out, $0.4567 (across /new)",
    );
    expect(lines).toContain(
      "today        3 requests, 1,000 in, 0 cached read, 0 cache write, 50 out, subscription (all threads)",
    );
  });

  it("prints them in a chat's /status reply, some of a day on a subscription", () => {
    const mixed = { ...usage, today: { ...usage.today, requests: 5, cost: 0.01, subscription: 2 } };
    const text = chatStatusText({ ...status, usage: mixed });
    expect(text).toContain(
      "Thread total (across /new): 12 requests, 34,567 in, 2,000 cached read, 100 cache write, 890 out, $0.4567",
    );
    expect(text).toContain(
      "Today (all threads): 5 requests, 1,000 in, 0 cached read, 0 cache write, 50 out, $0.0100 + subscription",
    );
  });

  it("prints no ledger lines when the orchestrator was not told of it", () => {
    expect(statusText(status)).not.toMatch(/thread total|today/);
  });
});
