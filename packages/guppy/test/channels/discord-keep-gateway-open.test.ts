import { describe, expect, it } from "vitest";
import {
  abortableSleep,
  type EarlyEnd,
  keepGatewayOpen,
} from "../../src/channels/discord/keep-gateway-open.js";

const SESSION_MS = 60 * 60_000;

/**
 * The loop on a fake clock: `lasts` gives how long each session runs (ms by the clock) or throws;
 * each wait advances the clock. The log lists sessions and waits in order; the loop is stopped
 * after `sessions` sessions.
 */
async function run(lasts: (n: number) => number | Error, sessions: number) {
  let clock = 0;
  const log: string[] = [];
  const ends: EarlyEnd[] = [];
  const abort = new AbortController();
  let n = 0;
  await keepGatewayOpen({
    session: async () => {
      n += 1;
      log.push(`session ${n}`);
      const lasted = lasts(n);
      if (n === sessions) abort.abort();
      if (lasted instanceof Error) throw lasted;
      clock += lasted;
    },
    sessionMs: SESSION_MS,
    signal: abort.signal,
    onEarlyEnd: (end) => void ends.push(end),
    now: () => clock,
    sleep: async (ms) => {
      log.push(`wait ${ms / 1000}`);
      clock += ms;
    },
  });
  return { log, ends };
}

describe("keepGatewayOpen (Discord's Gateway listener, session after session)", () => {
  it("waits before each retry of a session that ended at once, doubling up to 5 min", async () => {
    const { log, ends } = await run(() => 0, 9);
    expect(log).toEqual([
      "session 1",
      "wait 5",
      "session 2",
      "wait 10",
      "session 3",
      "wait 20",
      "session 4",
      "wait 40",
      "session 5",
      "wait 80",
      "session 6",
      "wait 160",
      "session 7",
      "wait 300",
      "session 8",
      "wait 300",
      "session 9",
    ]);
    expect(ends[0]).toEqual({ error: undefined, lastedMs: 0, delayMs: 5000 });
  });

  it("waits after a session that threw, and reports what it threw", async () => {
    const failure = new Error("login failed");
    const { log, ends } = await run(() => failure, 2);
    expect(log).toEqual(["session 1", "wait 5", "session 2"]);
    expect(ends).toEqual([{ error: failure, lastedMs: 0, delayMs: 5000 }]);
  });

  it("starts the next session at once after one that ran its planned duration", async () => {
    const { log, ends } = await run(() => SESSION_MS, 3);
    expect(log).toEqual(["session 1", "session 2", "session 3"]);
    expect(ends).toEqual([]);
  });

  it("starts again from 5 s after a session that ran long enough to be healthy", async () => {
    const { log } = await run((n) => (n === 3 ? 20 * 60_000 : 0), 5);
    expect(log).toEqual([
      "session 1",
      "wait 5",
      "session 2",
      "wait 10",
      "session 3", // 20 min, then its connection dropped
      "wait 5",
      "session 4",
      "wait 10",
      "session 5",
    ]);
  });

  it("with real timers: no second session before the wait; stop() during the wait ends it at once", async () => {
    const abort = new AbortController();
    const starts: number[] = [];
    const begun = Date.now();
    const loop = keepGatewayOpen({
      session: async () => void starts.push(Date.now() - begun),
      sessionMs: SESSION_MS,
      signal: abort.signal,
      onEarlyEnd: () => {},
      initialDelayMs: 200,
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(starts).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 200));
    expect(starts).toHaveLength(2);
    expect(starts[1]).toBeGreaterThanOrEqual(190);
    // Now in the second wait (400 ms): stopping does not wait it out.
    const stopping = Date.now();
    abort.abort();
    await loop;
    // Well before the 400 ms wait would have ended.
    expect(Date.now() - stopping).toBeLessThan(300);
    expect(starts).toHaveLength(2);
  });

  it("abortableSleep: resolves at once for a signal already aborted", async () => {
    const abort = new AbortController();
    abort.abort();
    const begun = Date.now();
    await abortableSleep(60_000, abort.signal);
    expect(Date.now() - begun).toBeLessThan(10_000);
  });
});
