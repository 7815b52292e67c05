import { afterEach, describe, expect, it } from "vitest";
import { createIdleCollector, type IdleCollector } from "../../src/gateway/idle-collect.js";

describe("createIdleCollector", () => {
  let collector: IdleCollector | undefined;
  afterEach(() => collector?.stop());

  /** An object only a WeakRef reaches: gone once a full GC has run. */
  const garbage = () => new WeakRef({ payload: new Array(1000).fill("x") });

  it("collects the heap once the thread has been quiet after activity (no --expose-gc)", async () => {
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
    const weak = garbage();
    collector = createIdleCollector(200);
    collector.touch();
    // A GC does not run while the test sleeps on its own: nothing allocates.
    for (let waited = 0; weak.deref() !== undefined && waited < 5_000; waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(weak.deref()).toBeUndefined();
    // The flag it turned on to get the collector is off again for contexts made later.
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
  });
});
