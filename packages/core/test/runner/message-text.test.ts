import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { oneLine, trimTrailingNewlines } from "../../src/runner/message-text.js";

describe("oneLine (a text on one readable line)", () => {
  const naive = (text: string, n: number) => {
    const flat = text.replace(/\s+/g, " ").trim();
    return flat.length > n ? `${flat.slice(0, n - 1)}…` : flat;
  };

  it("gives the line flattening the whole text would, for any text and width", () => {
    const chars = fc.constantFrom("a", "b", " ", "\n", "\t", "é", "…");
    fc.assert(
      fc.property(fc.array(chars, { maxLength: 600 }), fc.integer({ min: 1, max: 80 }), (cs, n) => {
        const text = cs.join("");
        expect(oneLine(text, n)).toBe(naive(text, n));
      }),
      { numRuns: 2000 },
    );
    // Long whitespace runs before and after the words, past the first prefix looked at.
    const padded = `${" ".repeat(1000)}hello${"\n".repeat(5000)}world${" ".repeat(3000)}`;
    expect(oneLine(padded, 60)).toBe("hello world");
    expect(oneLine(`${padded}!`, 11)).toBe("hello worl…");
  });
});

describe("trimTrailingNewlines", () => {
  it("does what /\\n+$/ replaced by nothing does", () => {
    const part = fc.constantFrom("\n", "\n\n", "\r", "\r\n", " ", "x", "é");
    fc.assert(
      fc.property(fc.array(part, { maxLength: 20 }), (parts) => {
        const text = parts.join("");
        expect(trimTrailingNewlines(text)).toBe(text.replace(/\n+$/, ""));
      }),
      { numRuns: 2000 },
    );
  });

  it("trims a text of many newline runs in one pass", () => {
    const text = `${"\n".repeat(3000)}x`.repeat(300);
    expect(trimTrailingNewlines(`${text}\n\n`)).toBe(text);
  });
});
