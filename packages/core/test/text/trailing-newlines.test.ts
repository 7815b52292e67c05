import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { trimTrailingNewlines } from "../../src/text/trailing-newlines.js";

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
