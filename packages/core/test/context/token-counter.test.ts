import { readFileSync } from "node:fs";
import fc from "fast-check";
import { countTokens } from "gpt-tokenizer/encoding/cl100k_base";
import { CL100K_TOKEN_SPLIT_REGEX } from "gpt-tokenizer/encodingParams/constants";
import { describe, expect, it } from "vitest";
import { createPieceCounter, MAX_PIECE } from "../../src/context/token-counter.js";

/** The BPE count of a whole text, special tokens' spellings counted as plain text. */
const plain = { disallowedSpecial: new Set<string>() };
const exactCount = (text: string) => countTokens(text, plain);

const repoFile = (path: string) =>
  readFileSync(new URL(`../../../../${path}`, import.meta.url), "utf8");

/** A piece counter on the real cl100k BPE that records what the BPE was handed. */
function spied(options: { cacheLimit?: number } = {}) {
  const seen = { calls: 0, longest: 0, malformed: 0 };
  const count = createPieceCounter({
    split: CL100K_TOKEN_SPLIT_REGEX,
    count: (piece) => {
      seen.calls++;
      seen.longest = Math.max(seen.longest, piece.length);
      if (/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(piece))
        seen.malformed++;
      return exactCount(piece);
    },
    ...options,
  });
  return { count, seen };
}

/** Deterministic pseudo-random text over `alphabet`. */
function randomText(length: number, alphabet: string, seed = 1): string {
  const chars = [...alphabet];
  let x = seed;
  let s = "";
  for (let i = 0; i < length; i++) {
    x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
    s += chars[x % chars.length];
  }
  return s;
}

describe("piece counter", () => {
  it("equals the whole text's BPE count on prose, code and JSON", () => {
    const lock = repoFile("package-lock.json");
    const texts = {
      readme: repoFile("README.md"),
      code: repoFile("packages/core/src/context/create-context-engine.ts"),
      json: lock,
      // How a tool call's arguments are counted: JSON.stringify, no whitespace at all.
      compactJson: JSON.stringify(JSON.parse(lock)),
    };
    const { count, seen } = spied();
    for (const [name, text] of Object.entries(texts))
      expect({ name, tokens: count(text) }).toEqual({ name, tokens: exactCount(text) });
    // A markdown table rule can be a run of dashes longer than MAX_PIECE: within 0.1%.
    const prose = repoFile("docs/configuration.md");
    const exact = exactCount(prose);
    expect(Math.abs(count(prose) - exact)).toBeLessThanOrEqual(exact * 0.001);
    expect(seen.longest).toBeLessThanOrEqual(MAX_PIECE);
  });

  it("equals the whole text's BPE count on any mix of words, numbers, symbols and whitespace", () => {
    const fragment = fc.constantFrom(
      "hello",
      " world",
      "Hello",
      "I'M",
      "don't",
      "'ll",
      "12345",
      "3.14",
      " ",
      "   ",
      "\t",
      "\n",
      "\r\n",
      "\n\n  ",
      "...",
      "!?",
      "(",
      '"',
      '{"a":1}',
      "naïve",
      "e\u0301",
      "日本語",
      "，",
      "👍🏽",
      "😀",
      "Ω",
      "\u00a0",
      "<|endoftext|>",
    );
    const { count } = spied();
    fc.assert(
      fc.property(fc.array(fragment, { maxLength: 40 }), (parts) => {
        const text = parts.join("");
        expect(count(text)).toBe(exactCount(text));
      }),
      { numRuns: 500 },
    );
  });

  it("hands the BPE at most MAX_PIECE characters of a 1,000,000-character run, and counts it closely", () => {
    const { count, seen } = spied();
    // "yyyy" is one token; the exact BPE count of the run (minutes to compute) is a quarter.
    const tokens = count("y".repeat(1_000_000));
    expect(seen.longest).toBeLessThanOrEqual(MAX_PIECE);
    expect(Math.abs(tokens - 250_000)).toBeLessThanOrEqual(250_000 * 0.005);
    // The parts of one run are counted once each: identical parts cost one BPE call.
    expect(seen.calls).toBeLessThanOrEqual(2);

    // Runs whose exact count takes well under a second (it is quadratic in their length).
    for (const [name, run] of [
      ["letters", randomText(6_000, "abcdefghijklmnopqrstuvwxyz")],
      [
        "base64",
        randomText(6_000, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"),
      ],
      ["symbols", randomText(6_000, "!#$%&()*+,-./:;<=>?@[]^_`{|}~")],
      ["spaces", " ".repeat(6_000)],
      ["cjk", randomText(6_000, "的一是不了人我在有他这为之大来以个中上们")],
      ["emoji", randomText(6_000, "😀🎉👍🏽🦀")],
    ] as const) {
      const exact = exactCount(run);
      const counted = count(run);
      expect({ name, within: Math.abs(counted - exact) <= exact * 0.01 }).toEqual({
        name,
        within: true,
      });
    }
    expect(seen.longest).toBeLessThanOrEqual(MAX_PIECE);
    expect(seen.malformed).toBe(0); // never between the halves of a surrogate pair
  });

  it("counts a repeated piece once, and stays exact when its table fills and is emptied", () => {
    const { count, seen } = spied({ cacheLimit: 8 });
    expect(count("xqzv ".repeat(40_000))).toBe(exactCount("xqzv ".repeat(40_000)));
    expect(seen.calls).toBeLessThanOrEqual(3); // "xqzv", " xqzv" and the final " "
    const varied = Array.from({ length: 500 }, (_, i) => `word${i} x${i % 7}`).join(" ");
    expect(count(varied)).toBe(exactCount(varied));
    expect(count(varied)).toBe(exactCount(varied));
  });
});
