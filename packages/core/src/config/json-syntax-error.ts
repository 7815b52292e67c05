import { lineAndColumn } from "./jsonc.js";

/**
 * Where and why JSON text is invalid. The problem never quotes the text (V8's JSON.parse
 * messages may: `Unexpected token 's', ..."apiKey": sk-proj-SU"...`), so an error about a
 * broken settings.json cannot echo a secret from it; and the offset does not depend on the
 * wording of V8's message (Node 20's has no position for some errors).
 */
export interface JsonSyntaxError {
  /** Character offset of the problem. */
  offset: number;
  /** What is wrong, without any of the text: "expected ',' or '}'". */
  problem: string;
}

type State = "value" | "value-or-close" | "key" | "key-or-close" | "after-value";

const unquoted = "expected a value (text must be in double quotes)";
const literals = ["true", "false", "null"];

/** The first syntax error of `text` as JSON (RFC 8259), or undefined when it is valid. */
export function findJsonSyntaxError(text: string): JsonSyntaxError | undefined {
  const n = text.length;
  const open: string[] = [];
  let i = 0;
  let state: State = "value";
  const fail = (problem: string, offset = i): JsonSyntaxError =>
    offset >= n ? { offset: n, problem: "the text ends too early" } : { offset, problem };
  for (;;) {
    skipSpace();
    const c = text[i];
    if (state === "after-value") {
      const top = open[open.length - 1];
      if (top === undefined) return i < n ? fail("unexpected text after the end") : undefined;
      const close: string = top === "{" ? "}" : "]";
      if (c === ",") {
        i++;
        state = top === "{" ? "key" : "value";
      } else if (c === close) {
        i++;
        open.pop();
      } else {
        return fail(`expected ',' or '${close}'`);
      }
      continue;
    }
    if (state === "key-or-close" || state === "value-or-close") {
      const close: string = state === "key-or-close" ? "}" : "]";
      if (c === close) {
        i++;
        open.pop();
        state = "after-value";
        continue;
      }
      state = state === "key-or-close" ? "key" : "value";
    }
    if (state === "key") {
      if (c !== '"') return fail("expected a key in double quotes");
      const bad = scanString();
      if (bad) return bad;
      skipSpace();
      if (text[i] !== ":") return fail("expected ':' after the key");
      i++;
      state = "value";
      continue;
    }
    // state === "value"
    if (c === "{" || c === "[") {
      open.push(c);
      i++;
      state = c === "{" ? "key-or-close" : "value-or-close";
      continue;
    }
    const bad =
      c === '"'
        ? scanString()
        : c === "-" || (c !== undefined && c >= "0" && c <= "9")
          ? scanNumber()
          : scanLiteral();
    if (bad) return bad;
    state = "after-value";
  }

  function skipSpace(): void {
    while (i < n && (text[i] === " " || text[i] === "\t" || text[i] === "\n" || text[i] === "\r")) {
      i++;
    }
  }

  function scanString(): JsonSyntaxError | undefined {
    const start = i;
    i++;
    while (i < n) {
      const c = text[i] as string;
      if (c === '"') {
        i++;
        return undefined;
      }
      if (c === "\\") {
        const e = text[i + 1];
        if (e === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
            return fail("invalid \\u escape in a string");
          }
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) {
          i += 2;
        } else {
          return fail("invalid escape in a string");
        }
        continue;
      }
      if (c === "\n" || c === "\r") return fail("a string is not closed on its line");
      if (c < " ") return fail("a control character in a string (write it as an escape)");
      i++;
    }
    return { offset: start, problem: "a string is not closed" };
  }

  function scanNumber(): JsonSyntaxError | undefined {
    if (text[i] === "-") i++;
    if (text[i] === "0") i++;
    else if (!digits()) return fail("invalid number");
    if (text[i] === ".") {
      i++;
      if (!digits()) return fail("invalid number");
    }
    if (text[i] === "e" || text[i] === "E") {
      i++;
      if (text[i] === "+" || text[i] === "-") i++;
      if (!digits()) return fail("invalid number");
    }
    return undefined;
  }

  function digits(): boolean {
    const start = i;
    while (i < n && (text[i] as string) >= "0" && (text[i] as string) <= "9") i++;
    return i > start;
  }

  function scanLiteral(): JsonSyntaxError | undefined {
    for (const word of literals) {
      if (text.startsWith(word, i) && !/[A-Za-z0-9_$-]/.test(text[i + word.length] ?? "")) {
        i += word.length;
        return undefined;
      }
    }
    return fail(/[A-Za-z_$'-]/.test(text[i] ?? "") ? unquoted : "expected a value");
  }
}

/**
 * One line for a file whose JSON text (comments already stripped) does not parse:
 * `<path>:<line>:<column> is not valid JSON: <problem>.` — settings.json and the access files.
 */
export function jsonSyntaxErrorLine(path: string, json: string): string {
  const found = findJsonSyntaxError(json) ?? {
    offset: json.length,
    problem: "not accepted by JSON.parse",
  };
  const { line, column } = lineAndColumn(json, found.offset);
  return `${path}:${line}:${column} is not valid JSON: ${found.problem}.`;
}
