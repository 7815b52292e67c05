import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/config-error.js";
import { parseJsoncFile } from "../../src/config/parse-jsonc-file.js";

const parses = (text: string): boolean => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

/** The ConfigError message for `text`, or undefined when it parses. */
const errorOf = (text: string): string | undefined => {
  try {
    parseJsoncFile("f.json", text);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
};

describe("parseJsoncFile", () => {
  it("gives what JSON.parse gives for valid JSON, however it is spaced", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(undefined, 0, 2, "\t"), (value, space) => {
        const text = JSON.stringify(value, null, space);
        expect(parseJsoncFile("f.json", text)).toEqual(JSON.parse(text));
      }),
    );
  });

  it("agrees with JSON.parse on whether damaged JSON is valid (no comments or commas added)", () => {
    const damage = fc.constantFrom(
      ..."{}[]\":\\ \n\t-+.0123456789eEtrufalsn'xu\u0001\u00e9\u00a0".split(""),
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
          // A cut can leave a trailing comma, which a JSONC file may have.
          const strict = damaged.replace(/,(\s*[}\]])/g, "$1");
          if (damaged.trim() === "") return;
          const message = errorOf(damaged);
          expect(message === undefined).toBe(parses(strict) || parses(damaged));
          if (message) expect(message).toMatch(/^f\.json:\d+:\d+ is not valid JSON: [^\n]+\.$/);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("takes comments, trailing commas and a byte order mark; nothing but comments is undefined", () => {
    const text = '\uFEFF// who\n{\n  /* the model */ "model": "m", // end\n  "list": [1, 2,],\n}\n';
    expect(parseJsoncFile("f.json", text)).toEqual({ model: "m", list: [1, 2] });
    expect(parseJsoncFile("f.json", "")).toBeUndefined();
    expect(parseJsoncFile("f.json", "// nothing here\n/* yet */\n")).toBeUndefined();
  });

  it('keeps a "__proto__" key as JSON.parse does: an own property', () => {
    const text = '{"__proto__": {"model": "m"}, "a": [{"__proto__": 1}]}';
    const value = parseJsoncFile("f.json", text) as Record<string, unknown>;
    expect(value).toEqual(JSON.parse(text));
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(value.model).toBeUndefined();
    expect(Object.keys(value)).toEqual(["__proto__", "a"]);
  });

  it.each([
    [
      '{\n  "apiKey": sk-proj-SECRET\n}',
      "2:13",
      "expected a value (text must be in double quotes)",
    ],
    ["{'model': 1}", "1:2", "expected a key in double quotes"],
    ['{"a": 1, bob: 2}', "1:10", "expected a key in double quotes"],
    ['{"a": 1 "b": 2}', "1:9", "expected ',' or '}'"],
    ["[1 2]", "1:4", "expected ',' or ']'"],
    ['{"a" 1}', "1:6", "expected ':' after the key"],
    ["[1, 2", "1:6", "the text ends too early"],
    ['{"a": "open\n}', "1:7", "a string is not closed on its line"],
    ['{"a": "\\q"}', "1:7", "invalid escape in a string"],
    ['{"a": "\\u12"}', "1:7", "invalid \\u escape in a string"],
    ['{"a": 01}', "1:8", "expected ',' or '}'"],
    ['{"a": 1.}', "1:7", "invalid number"],
    ["[-]", "1:2", "invalid number"],
    ["{} {}", "1:4", "unexpected text after the end"],
    ["/* open", "1:1", "a comment is not closed"],
    ['{"a": "\u0001"}', "1:7", "a control character in a string (write it as an escape)"],
  ])("%j: %s, %s", (text, at, problem) => {
    expect(parses(text)).toBe(false);
    expect(errorOf(text)).toBe(`f.json:${at} is not valid JSON: ${problem}.`);
  });
});
