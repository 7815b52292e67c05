import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { onlyCommentsAndSpace } from "../../src/memory/read-text-file.js";

/** What the file reader meant all along: strip closed comments, and nothing is left but space. */
const reference = (text: string) => text.replace(/<!--[\s\S]*?-->/g, "").trim() === "";

describe("onlyCommentsAndSpace", () => {
  it("agrees with stripping closed comments and trimming, on texts made of comment parts", () => {
    const part = fc.constantFrom(
      "<!--",
      "-->",
      "<!-- note -->",
      "-",
      "!",
      "<",
      ">",
      " ",
      "\n",
      "\t",
      "\uFEFF",
      "a",
    );
    fc.assert(
      fc.property(fc.array(part, { maxLength: 30 }), (parts) => {
        const text = parts.join("");
        expect(onlyCommentsAndSpace(text)).toBe(reference(text));
      }),
      { numRuns: 3000 },
    );
  });

  it("answers for the template guppy init writes and for real content", () => {
    expect(onlyCommentsAndSpace("<!-- What guppy should remember. -->\n\n<!-- more -->\n")).toBe(
      true,
    );
    expect(onlyCommentsAndSpace("<!-- a -->\n- likes tea\n")).toBe(false);
    expect(onlyCommentsAndSpace("<!--->")).toBe(false);
  });

  it("reads a text of 100,000 unclosed comment openings as content", () => {
    // The old regex rescanned the rest of the text from each opening: quadratic, minutes here.
    expect(onlyCommentsAndSpace("<!--".repeat(100_000))).toBe(false);
  });
});
