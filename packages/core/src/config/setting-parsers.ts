/** Value parsers for settings: each turns a raw env/flag/JSON value into a typed one or says what it expected. */
export type RawValue = string | number | boolean;
export type ParseResult<T> = { ok: true; value: T } | { ok: false; expected: string };
export type Parser<T> = (raw: RawValue) => ParseResult<T>;

export const stringValue: Parser<string> = (raw) =>
  typeof raw === "string" && raw.trim() !== ""
    ? { ok: true, value: raw.trim() }
    : { ok: false, expected: "a non-empty string" };

export function integerValue(min: number, max = Number.MAX_SAFE_INTEGER): Parser<number> {
  const expected =
    max === Number.MAX_SAFE_INTEGER ? `an integer ≥ ${min}` : `an integer from ${min} to ${max}`;
  return (raw) => {
    const n = typeof raw === "number" ? raw : typeof raw === "string" ? Number(raw.trim()) : NaN;
    if (typeof raw === "string" && raw.trim() === "") return { ok: false, expected };
    return Number.isInteger(n) && n >= min && n <= max
      ? { ok: true, value: n }
      : { ok: false, expected };
  };
}

export const booleanValue: Parser<boolean> = (raw) => {
  if (typeof raw === "boolean") return { ok: true, value: raw };
  const s = String(raw).trim().toLowerCase();
  if (["1", "true", "yes", "on"].includes(s)) return { ok: true, value: true };
  if (["0", "false", "no", "off"].includes(s)) return { ok: true, value: false };
  return { ok: false, expected: "true or false (also 1/0, yes/no, on/off)" };
};

export function oneOf<const T extends string>(values: readonly T[]): Parser<T> {
  return (raw) =>
    typeof raw === "string" && (values as readonly string[]).includes(raw.trim())
      ? { ok: true, value: raw.trim() as T }
      : { ok: false, expected: `one of ${values.join(", ")}` };
}

export const urlValue: Parser<string> = (raw) => {
  if (typeof raw !== "string") return { ok: false, expected: "an http(s) URL" };
  try {
    const url = new URL(raw.trim());
    if (url.protocol === "http:" || url.protocol === "https:") {
      return { ok: true, value: raw.trim().replace(/\/+$/, "") };
    }
  } catch {
    // fall through
  }
  return { ok: false, expected: "an http(s) URL such as http://127.0.0.1:11434/v1" };
};

export const modelRefValue: Parser<string> = (raw) => {
  const expected = "provider/model-id, e.g. anthropic/claude-sonnet-4-5 or openai/gpt-4o-mini";
  if (typeof raw !== "string") return { ok: false, expected };
  const s = raw.trim();
  const slash = s.indexOf("/");
  return slash > 0 && slash < s.length - 1 ? { ok: true, value: s } : { ok: false, expected };
};

export const timezoneValue: Parser<string> = (raw) => {
  const expected = "an IANA time zone such as Europe/Berlin or UTC";
  if (typeof raw !== "string" || raw.trim() === "") return { ok: false, expected };
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: raw.trim() });
    return { ok: true, value: raw.trim() };
  } catch {
    return { ok: false, expected };
  }
};

export const hostValue: Parser<string> = (raw) =>
  typeof raw === "string" && /^[A-Za-z0-9.:[\]-]+$/.test(raw.trim())
    ? { ok: true, value: raw.trim() }
    : { ok: false, expected: "a host name or IP address such as 127.0.0.1" };

export function listValue(): Parser<string[]> {
  return (raw) => {
    if (typeof raw === "string") {
      const items = raw
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "");
      return { ok: true, value: items };
    }
    if (typeof raw === "number") return { ok: true, value: [String(raw)] };
    return { ok: false, expected: "a comma-separated list" };
  };
}
