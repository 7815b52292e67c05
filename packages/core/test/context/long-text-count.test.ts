import { describe, expect, it, vi } from "vitest";
import { createTokenCounter, loadEncoder, MAX_PIECE } from "../../src/context/token-counter.js";

// Its own file: it replaces gpt-tokenizer's countTokens with a spy, and the BPE tables are loaded
// once per module instance.
const handed = vi.hoisted(() => ({ longest: 0 }));
vi.mock("gpt-tokenizer/encoding/cl100k_base", async (importOriginal) => {
  const real = await importOriginal<typeof import("gpt-tokenizer/encoding/cl100k_base")>();
  return {
    ...real,
    countTokens: (input: string, options?: Parameters<typeof real.countTokens>[1]) => {
      handed.longest = Math.max(handed.longest, input.length);
      // More than a few thousand characters of one run would take the real BPE minutes; the
      // length is what is checked, so answer without it.
      return input.length > 4_096 ? 0 : real.countTokens(input, options);
    },
  };
});

describe("token counter on one long run", () => {
  it("counts a 1,000,000-letter message without handing the BPE more than MAX_PIECE characters", async () => {
    await loadEncoder();
    const c = createTokenCounter();
    const message = { role: "user" as const, content: "y".repeat(1_000_000), timestamp: 0 };
    const tokens = c.message(message);
    expect(handed.longest).toBeLessThanOrEqual(MAX_PIECE);
    // "yyyy" is one token: a quarter of the letters, plus the message framing.
    expect(tokens).toBeGreaterThan(250_000 * 0.995);
    expect(tokens).toBeLessThan(250_000 * 1.005 + 10);
  });
});
