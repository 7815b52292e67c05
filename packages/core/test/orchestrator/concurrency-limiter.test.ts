import { describe, expect, it } from "vitest";
import { createConcurrencyLimiter } from "../../src/orchestrator/concurrency-limiter.js";

describe("concurrency limiter", () => {
  /** Asks for a slot as `name` (with `rank`, if given); `served` lists who got one, in order. */
  const setup = (limit: number) => {
    const limiter = createConcurrencyLimiter(limit);
    const served: string[] = [];
    const ask = (name: string, rank?: number) =>
      limiter.acquire(rank).then(() => {
        served.push(name);
      });
    return { limiter, served, ask };
  };
  const settle = () => new Promise((r) => setImmediate(r));

  it("serves ranked waiters (a replay) lowest rank first, before any without a rank", async () => {
    const { limiter, served, ask } = setup(1);
    void ask("r0", 0);
    void ask("live");
    void ask("r3", 3);
    void ask("r1", 1);
    await settle();
    expect(served).toEqual(["r0"]);
    expect(limiter.waiting).toBe(3);
    limiter.release();
    await settle();
    // r2 asks only now (its thread's previous prompt just ran): it still goes before r3.
    void ask("r2", 2);
    for (let i = 0; i < 3; i++) limiter.release();
    await settle();
    expect(served).toEqual(["r0", "r1", "r2", "r3", "live"]);
    expect(limiter.waiting).toBe(0);
  });

  it("takes a slot synchronously only when acquire would resolve at once", async () => {
    const { limiter, served, ask } = setup(2);
    expect(limiter.tryAcquire()).toBe(true);
    void ask("second");
    await settle();
    expect(served).toEqual(["second"]);
    expect(limiter.tryAcquire()).toBe(false);
    void ask("waits");
    expect(limiter.active).toBe(2);
    expect(limiter.waiting).toBe(1);
    limiter.release();
    await settle();
    expect(served).toEqual(["second", "waits"]);
    // Nobody waits and a slot is free again: taken at once.
    limiter.release();
    expect(limiter.tryAcquire()).toBe(true);
    expect(limiter.active).toBe(2);
  });

  it("keeps a holder's slot for its next ranked request only when that would be served first", async () => {
    const { limiter, served, ask } = setup(1);
    expect(limiter.tryAcquire()).toBe(true);
    void ask("live");
    void ask("r5", 5);
    await settle();
    // r2 (the holder's next prompt) goes before r5 and the live one: it keeps the slot.
    expect(limiter.keepFor(2)).toBe(true);
    // r7 would not: the slot is released to r5 instead.
    expect(limiter.keepFor(7)).toBe(false);
    limiter.release();
    await settle();
    expect(served).toEqual(["r5"]);
    expect(limiter.active).toBe(1);
  });

  it("keeps the order of many ranks asked for in any order", async () => {
    const { limiter, served, ask } = setup(1);
    void ask("first");
    const ranks = Array.from({ length: 50 }, (_, i) => (i * 37) % 50);
    for (const rank of ranks) void ask(String(rank), rank);
    for (let i = 0; i < 50; i++) limiter.release();
    await settle();
    expect(served).toEqual(["first", ...Array.from({ length: 50 }, (_, i) => String(i))]);
  });
});
