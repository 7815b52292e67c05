import type { StreamFn } from "@mariozechner/pi-agent-core";
import type { Api, Model } from "@mariozechner/pi-ai";
import { encode } from "gpt-tokenizer/encoding/cl100k_base";
import { describe, expect, it, vi } from "vitest";
import { computeBudget } from "../../src/context/compaction.js";
import { createContextEngine } from "../../src/context/create-context-engine.js";
import { createTokenCounter, loadEncoder } from "../../src/context/token-counter.js";
import { assistant, call, result, user } from "./history-arbitrary.js";

describe("budget", () => {
  it("splits a large window: input = window − reply − margin, compaction at window − reserve", () => {
    const b = computeBudget({
      contextWindow: 200_000,
      maxTokens: 16_384,
      reserveTokens: 16_384,
      keepRecentTokens: 20_000,
    });
    expect(b.input).toBe(200_000 - 16_384 - 6_000);
    expect(b.compactAt).toBe(b.input); // window − reserve is above the input budget here
    expect(b.keepRecent).toBe(20_000);
  });

  it("keeps a small window workable: threshold ≥ 60% of the input budget, kept ≤ half of it", () => {
    const b = computeBudget({
      contextWindow: 8_000,
      maxTokens: 2_000,
      reserveTokens: 16_384,
      keepRecentTokens: 20_000,
    });
    expect(b.input).toBe(8_000 - 2_000 - 256);
    expect(b.compactAt).toBe(Math.floor(b.input * 0.6));
    expect(b.keepRecent).toBe(Math.floor(b.compactAt / 2));
    expect(b.compactAt).toBeLessThan(b.input);
  });

  it("uses window − reserve when that is between 60% and 100% of the input budget", () => {
    const b = computeBudget({
      contextWindow: 100_000,
      maxTokens: 4_000,
      reserveTokens: 30_000,
      keepRecentTokens: 20_000,
    });
    expect(b.compactAt).toBe(70_000);
  });
});

describe("token counter", () => {
  it("counts with the BPE once loaded, never above the byte bound, and caches per message", async () => {
    await loadEncoder();
    const c = createTokenCounter();
    expect(c.loaded).toBe(true);
    expect(c.text("hello world")).toBe(2);
    const m = user("The quick brown fox jumps over the lazy dog. ".repeat(50));
    const first = c.message(m);
    expect(first).toBeGreaterThan(400);
    expect(first).toBeLessThan(c.messageBound(m));
    // Cached per object: mutating the message (which never happens) does not recount it.
    (m as { content: string }).content = "x";
    expect(c.message(m)).toBe(first);
    const a = assistant("", [call("c1")]);
    expect(c.message(a)).toBeGreaterThan(8);
    expect(c.message(result("c1", "ok"))).toBeGreaterThan(8);
  });

  it("counts the spelling of a special token in a message as plain text instead of throwing", async () => {
    // Before: countTokens refused "<|endoftext|>" ("Disallowed special token found"), so once the
    // BPE was loaded every turn of a thread holding such a message failed.
    await loadEncoder();
    const c = createTokenCounter();
    const text = "What does <|endoftext|> or <|im_start|>user mean in a prompt?";
    expect(c.text(text)).toBe(encode(text, { disallowedSpecial: new Set() }).length);
    expect(c.message(user(text))).toBeGreaterThan(c.text(text));
  });

  it("counts a word repeated 40,000 times with one BPE merge, not one LRU update per repeat", async () => {
    // gpt-tokenizer's merge cache deletes and re-adds its entry on every hit; with V8's Map that
    // lengthens the entry's bucket chain until a rehash, so once the cache was full (100k pieces)
    // these 200 KB took 19 s. Counted: the Map deletions while counting.
    await loadEncoder();
    const c = createTokenCounter();
    const deletes = vi.spyOn(Map.prototype, "delete");
    try {
      expect(c.text("xqzv ".repeat(40_000))).toBe(160_001); // four tokens each time, and " "
      expect(deletes.mock.calls.length).toBeLessThan(10);
    } finally {
      deletes.mockRestore();
    }
  });
});

describe("context engine budget", () => {
  it("tightens by 20 % per provider overflow, down to half, and reports the budget it uses", () => {
    const full = computeBudget({
      contextWindow: 100_000,
      maxTokens: 4_000,
      reserveTokens: 16_384,
      keepRecentTokens: 20_000,
    });
    const engine = createContextEngine({
      model: { contextWindow: 100_000, maxTokens: 4_000 } as Model<Api>,
      budget: full,
      stream: (() => {
        throw new Error("no requests in this test");
      }) as StreamFn,
      systemPrompt: () => "system",
      tools: () => [],
      onCompacted: () => {},
    });
    expect(engine.budget).toEqual(full);
    engine.tighten();
    expect(engine.budget.input).toBe(Math.floor(full.input * 0.8));
    expect(engine.stats([]).inputBudget).toBe(engine.budget.input);
    for (let i = 0; i < 5; i++) engine.tighten();
    expect(engine.budget.input).toBe(Math.floor(full.input * 0.5));
    expect(engine.budget.compactAt).toBe(Math.floor(full.compactAt * 0.5));
  });
});
