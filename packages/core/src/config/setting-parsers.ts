/** Value parsers for settings: each turns a raw env/flag/JSON value into a typed one or says what it expected. */
export type RawValue = string | number | boolean;
export type ParseResult<T> =
  | { ok: true; value: T }
  /**
   * `problem`: for a structured value, what is wrong and where inside it
   * (`tools.telegram.guest.allow: unknown tool "bsh"`), said instead of the whole value.
   */
  | { ok: false; expected: string; problem?: string };
export interface Parser<T> {
  /** `raw`: a flag's or variable's string, or what settings.json holds (any JSON value). */
  (raw: unknown): ParseResult<T>;
  /** What the parser accepts, for error messages: "an integer ≥ 1", "a non-empty string", ... */
  readonly expected: string;
  /** A list: settings.json may give it as a JSON array too (no other setting takes one). */
  readonly list?: true;
}

/** A parser from what it accepts (for messages) and a function giving the value or undefined. */
function parser<T>(expected: string, accept: (raw: RawValue) => T | undefined): Parser<T> {
  const parse = (raw: unknown): ParseResult<T> => {
    const value = isRawValue(raw) ? accept(raw) : undefined;
    return value === undefined ? { ok: false, expected } : { ok: true, value };
  };
  return Object.assign(parse, { expected });
}

/** A JSON object (not null, not an array): what a structured setting or a server's answer must be. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A string, number or boolean: what a flag, a variable or a plain settings.json value is. */
export function isRawValue(value: unknown): value is RawValue {
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean";
}

export const stringValue: Parser<string> = parser("a non-empty string", (raw) =>
  typeof raw === "string" && raw.trim() !== "" ? raw.trim() : undefined,
);

/**
 * A key or token: it goes into an HTTP header (or a URL), where only visible ASCII can go. One
 * with a line break, a space or another letter in it (pasted with the rest of a line) could never
 * work, and fetch's error about the header quoted the whole secret.
 */
export const tokenValue: Parser<string> = parser(
  "a token of visible ASCII characters (no spaces, line breaks or other letters)",
  (raw) => {
    if (typeof raw !== "string") return undefined;
    const token = raw.trim();
    return /^[\x21-\x7e]+$/.test(token) ? token : undefined;
  },
);

export function integerValue(min: number, max = Number.MAX_SAFE_INTEGER): Parser<number> {
  const expected =
    max === Number.MAX_SAFE_INTEGER ? `an integer ≥ ${min}` : `an integer from ${min} to ${max}`;
  // Plain decimal digits (a sign only where negatives are allowed): Number() would also take
  // 0x10, 0b101, 0o17 and 1e3.
  const digits = min < 0 ? /^-?\d+$/ : /^\d+$/;
  return parser(expected, (raw) => {
    if (typeof raw === "string" && !digits.test(raw.trim())) return undefined;
    const n = typeof raw === "number" ? raw : typeof raw === "string" ? Number(raw.trim()) : NaN;
    return Number.isInteger(n) && n >= min && n <= max ? n : undefined;
  });
}

/** A decimal number from `min` to `max` (a temperature: 0.7). */
export function numberValue(min: number, max: number): Parser<number> {
  return parser(`a number from ${min} to ${max}`, (raw) => {
    if (typeof raw === "string" && !/^-?\d+(\.\d+)?$/.test(raw.trim())) return undefined;
    const n = typeof raw === "number" ? raw : typeof raw === "string" ? Number(raw.trim()) : NaN;
    return Number.isFinite(n) && n >= min && n <= max ? n : undefined;
  });
}

export const booleanValue: Parser<boolean> = parser(
  "true or false (also 1/0, yes/no, on/off)",
  (raw) => {
    if (typeof raw === "boolean") return raw;
    const s = String(raw).trim().toLowerCase();
    if (["1", "true", "yes", "on"].includes(s)) return true;
    if (["0", "false", "no", "off"].includes(s)) return false;
    return undefined;
  },
);

export function oneOf<const T extends string>(values: readonly T[]): Parser<T> {
  return parser(`one of ${values.join(", ")}`, (raw) =>
    typeof raw === "string" && (values as readonly string[]).includes(raw.trim())
      ? (raw.trim() as T)
      : undefined,
  );
}

/**
 * An http(s) URL with no user name or password: fetch, which every provider SDK and chat adapter
 * sends through, refuses a URL with credentials before connecting, so such a setting could never
 * work (a key goes in its own setting; a proxy's password in a header the provider sends).
 */
export const urlValue: Parser<string> = parser(
  "an http(s) URL without a user name or password (fetch refuses those), such as http://127.0.0.1:11434/v1",
  (raw) => {
    if (typeof raw !== "string") return undefined;
    try {
      const url = new URL(raw.trim());
      if (url.username !== "" || url.password !== "") return undefined;
      if (url.protocol === "http:" || url.protocol === "https:") {
        return raw.trim().replace(/\/+$/, "");
      }
    } catch {
      // not a URL
    }
    return undefined;
  },
);

export const modelRefValue: Parser<string> = parser(
  "provider/model-id, e.g. anthropic/claude-sonnet-4-5 or openai/gpt-4o-mini",
  (raw) => {
    if (typeof raw !== "string") return undefined;
    const s = raw.trim();
    const slash = s.indexOf("/");
    return slash > 0 && slash < s.length - 1 ? s : undefined;
  },
);

/**
 * Zones checked so far: an `Intl.DateTimeFormat` costs tens of kB outside the JS heap, too much to
 * make per event file when 10,000 files name the same few zones.
 */
const zones = new Map<string, boolean>();

/**
 * Whether `zone` is an IANA time zone this runtime knows: the one check for GUPPY_TIMEZONE and an
 * event file's `timezone`, so both accept the same zones.
 */
export function knownTimeZone(zone: string): boolean {
  let known = zones.get(zone);
  if (known === undefined) {
    try {
      new Intl.DateTimeFormat("en-US", { timeZone: zone });
      known = zone.trim() !== "";
    } catch {
      known = false;
    }
    if (zones.size >= 1024) zones.clear();
    zones.set(zone, known);
  }
  return known;
}

export const timezoneValue: Parser<string> = parser(
  "an IANA time zone such as Europe/Berlin or UTC",
  (raw) => (typeof raw === "string" && knownTimeZone(raw.trim()) ? raw.trim() : undefined),
);

export const hostValue: Parser<string> = parser(
  "a host name or IP address such as 127.0.0.1",
  (raw) =>
    typeof raw === "string" && /^[A-Za-z0-9.:[\]-]+$/.test(raw.trim()) ? raw.trim() : undefined,
);

export function listValue(): Parser<string[]> {
  const list = parser("a comma-separated list", (raw) => {
    if (typeof raw === "string") {
      return raw
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "");
    }
    if (typeof raw === "number") return [String(raw)];
    return undefined;
  });
  return Object.assign(list, { list: true as const });
}

/** The name in `keys` closest to `unknown` (at most two edits away), for a "did you mean". */
export function closestName(unknown: string, keys: readonly string[]): string | undefined {
  const lower = unknown.toLowerCase();
  let best: { key: string; distance: number } | undefined;
  for (const key of keys) {
    const d = editDistance(lower, key.toLowerCase());
    if (d <= 2 && (!best || d < best.distance)) best = { key, distance: d };
  }
  return best?.key;
}

/** Levenshtein distance: the fewest inserts, deletions and substitutions from `a` to `b`. */
export function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] ?? 0;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j] ?? 0;
      row[j] = Math.min(
        (row[j] ?? 0) + 1,
        (row[j - 1] ?? 0) + 1,
        prev + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      prev = tmp;
    }
  }
  return row[b.length] ?? 0;
}
