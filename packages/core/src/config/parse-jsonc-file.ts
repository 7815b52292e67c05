import {
  getLocation,
  type Node,
  type ParseError,
  parseTree,
  printParseErrorCode,
} from "jsonc-parser";
import { ConfigError } from "./config-error.js";

type ErrorName = ReturnType<typeof printParseErrorCode>;

/** What each of jsonc-parser's errors means, in words that never quote the text. */
const problems: Record<ErrorName, string> = {
  InvalidSymbol: "expected a value",
  InvalidNumberFormat: "invalid number",
  PropertyNameExpected: "expected a key in double quotes",
  ValueExpected: "expected a value",
  ColonExpected: "expected ':' after the key",
  CommaExpected: "expected ','", // and which bracket: see problem()
  CloseBraceExpected: "expected ',' or '}'",
  CloseBracketExpected: "expected ',' or ']'",
  EndOfFileExpected: "unexpected text after the end",
  InvalidCommentToken: "invalid comment",
  UnexpectedEndOfComment: "a comment is not closed",
  UnexpectedEndOfString: "a string is not closed on its line",
  UnexpectedEndOfNumber: "invalid number",
  InvalidUnicode: "invalid \\u escape in a string",
  InvalidEscapeCharacter: "invalid escape in a string",
  InvalidCharacter: "a control character in a string (write it as an escape)",
  "<unknown ParseErrorCode>": "not valid",
};

/**
 * A hand-edited JSON file's value (settings.json, the files under access/): comments and trailing
 * commas allowed, a byte order mark dropped; undefined when nothing is left. Invalid JSON is a
 * one-line ConfigError naming `path`, line and column, and never quoting the file (a secret in it).
 */
export function parseJsoncFile(path: string, text: string): unknown {
  const json = text.replace(/^\uFEFF/, "");
  const errors: ParseError[] = [];
  const tree = parseTree(json, errors, { allowTrailingComma: true });
  const first = errors[0];
  if (!first) return tree && nodeValue(tree);
  if (!tree && errors.every((e) => e.offset >= json.length)) return undefined; // comments only
  const { line, column } = lineAndColumn(json, first.offset);
  throw new ConfigError(`${path}:${line}:${column} is not valid JSON: ${problem(json, first)}.`);
}

function problem(json: string, { error, offset }: ParseError): string {
  if (offset >= json.length) return "the text ends too early";
  const name = printParseErrorCode(error);
  const location = getLocation(json, offset);
  if (name === "CommaExpected") {
    return typeof location.path.at(-1) === "number" ? "expected ',' or ']'" : "expected ',' or '}'";
  }
  if (name !== "InvalidSymbol") return problems[name];
  if (location.isAtPropertyKey) return problems.PropertyNameExpected;
  const c = json[offset] ?? "";
  if (/[A-Za-z_$']/.test(c)) return "expected a value (text must be in double quotes)";
  return /[-+.0-9]/.test(c) ? problems.InvalidNumberFormat : problems.ValueExpected;
}

/** Objects as JSON.parse builds them: a "__proto__" key is an own property, not the prototype. */
function nodeValue(node: Node): unknown {
  const children = node.children ?? [];
  if (node.type === "array") return children.map(nodeValue);
  if (node.type !== "object") return node.value;
  return Object.fromEntries(
    children.map((property) => {
      const [key, value] = property.children ?? [];
      return [key?.value, value && nodeValue(value)];
    }),
  );
}

/** Line and column (1-based) of a character offset. */
function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  return {
    line: before.split("\n").length,
    column: offset - before.lastIndexOf("\n"),
  };
}
