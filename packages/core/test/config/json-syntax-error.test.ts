import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { findJsonSyntaxError } from "../../src/config/json-syntax-error.js";

const parses = (text: string): boolean => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

describe("findJsonSyntaxError", () => {
  it("finds nothing in valid JSON, however it is spaced", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(undefined, 0, 2, "\t"), (value, space) => {
        expect(findJsonSyntaxError(JSON.stringify(value, null, space))).toBeUndefined();
      }),
    );
  });

  it("agrees with JSON.parse on whether damaged JSON is valid", () => {
    const damage = fc.constantFrom(
      ..."{}[]\",:\\ \n\t-+.0123456789eEtrufalsn'/xu\u0001\u00e9".split(""),
      "true",
      "null",
      "1e",
      "-0",
      "\\u12",
      "\\u00e9",
    );
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.nat(),
        fc.nat({ max: 3 }),
        damage,
        (value, at, cut, insert) => {
          const text = JSON.stringify(value, null, 1);
          const p = at % (text.length + 1);
          const damaged = text.slice(0, p) + insert + text.slice(p + cut);
          const found = findJsonSyntaxError(damaged);
          expect(found === undefined).toBe(parses(damaged));
          if (found) expect(found.offset).toBeLessThanOrEqual(damaged.length);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it.each([
    ['{\n  "apiKey": sk-proj-SECRET\n}', 14, "expected a value (text must be in double quotes)"],
    ["{'model': 1}", 1, "expected a key in double quotes"],
    ['{"a": 1 "b": 2}', 8, "expected ',' or '}'"],
    ['{"a" 1}', 5, "expected ':' after the key"],
    ["[1, 2", 5, "the text ends too early"],
    ['{"a": "open\n}', 11, "a string is not closed on its line"],
    ['{"a": "\\q"}', 7, "invalid escape in a string"],
    ['{"a": 01}', 7, "expected ',' or '}'"],
    ['{"a": 1.}', 8, "invalid number"],
    ["{} {}", 3, "unexpected text after the end"],
  ])("%j: offset %i, %s", (text, offset, problem) => {
    expect(parses(text)).toBe(false);
    expect(findJsonSyntaxError(text)).toEqual({ offset, problem });
  });
});
