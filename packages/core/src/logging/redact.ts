import type { LogFields, Logger } from "./logger.js";

/** A secret guppy holds, by the name the user knows it under (GUPPY_API_KEY, ANTHROPIC_API_KEY). */
export interface Secret {
  name: string;
  value: string;
}

/**
 * Replaces configured secrets in what guppy stores, logs or sends: a key a tool printed, or the
 * model repeated, becomes `[redacted: <name>]`.
 */
export interface Redactor {
  /**
   * Whether there is anything to redact (no secrets: every method returns its input). Users
   * may read it once: a redactor made with no secrets stays a pass-through for them even after
   * `add`.
   */
  readonly active: boolean;
  /**
   * Redacts one more secret from now on: a key that changed while guppy runs (guppy.env edited
   * under a running gateway). One too short or already known is ignored, as at creation.
   */
  add(secret: Secret): void;
  text(s: string): string;
  /** `v` with every string in it redacted; `v` itself when nothing changed (never mutated). */
  value<T>(v: T): T;
  /** A redactor for one stream of text pieces (see TextStream). */
  stream(): TextStream;
  /**
   * How many chars at the `end` (or the `start`) of `piece`, cut out of a longer text, may be
   * part of a secret the cut split: no whole-value match finds half a key, so an excerpt leaves
   * those chars out with the rest of what it omits. 0 when nothing there could be.
   */
  splitSecret(piece: string, side: "start" | "end"): number;
}

/**
 * Redacts text that arrives in pieces (a model's text deltas): a secret split across pieces is
 * still caught. `push` returns what is safe to pass on now; a tail that could be the start of a
 * secret is held back until the next piece shows what it is, or `end` releases it.
 */
export interface TextStream {
  push(piece: string): string;
  end(): string;
}

/**
 * Values shorter than this are not redacted: they would match ordinary text (a bot token of
 * "test", a key of "ollama") and no real key is this short.
 */
export const MIN_SECRET_CHARS = 8;

/**
 * `live`, when given, is asked for more secrets at each use (an OAuth token refreshed while guppy
 * runs); it returns the same array until they change, and only then are the patterns rebuilt.
 */
export function createRedactor(
  secrets: readonly Secret[],
  live?: () => readonly Secret[],
): Redactor {
  let patterns: Secret[] = [];
  let lastLive: readonly Secret[] | undefined;
  const build = (all: readonly Secret[]) => {
    const next: Secret[] = [];
    const seen = new Set<string>();
    for (const { name, value } of all) {
      if (value.length < MIN_SECRET_CHARS || seen.has(value)) continue;
      seen.add(value);
      next.push({ name, value });
      // As it appears inside a JSON string (the log files are JSON lines).
      const escaped = JSON.stringify(value).slice(1, -1);
      if (escaped !== value && !seen.has(escaped)) {
        seen.add(escaped);
        next.push({ name, value: escaped });
      }
    }
    // A secret that contains another is replaced whole.
    next.sort((a, b) => b.value.length - a.value.length);
    patterns = next;
  };
  const sync = () => {
    if (!live) return;
    const current = live();
    if (current === lastLive) return;
    lastLive = current;
    build([...secrets, ...added, ...current]);
  };
  /** Secrets learnt while running (a key changed in guppy.env: `add`). */
  const added: Secret[] = [];
  build(secrets);
  sync();
  let active = patterns.length > 0;
  const refresh = () => {
    sync();
    active = patterns.length > 0;
  };

  const text = (s: string): string => {
    refresh();
    if (!active) return s;
    let out = s;
    for (const { name, value } of patterns) {
      if (out.includes(value)) out = out.split(value).join(`[redacted: ${name}]`);
    }
    return out;
  };

  const value = <T>(v: T): T => {
    refresh();
    return active ? (redactValue(v, text) as T) : v;
  };

  /** Length of the longest tail of `s` that is the start of a secret (and not a whole one). */
  const heldTail = (s: string): number => {
    let held = 0;
    for (const { value: secret } of patterns) {
      for (let k = Math.min(secret.length - 1, s.length); k > held; k--) {
        if (s.endsWith(secret.slice(0, k))) {
          held = k;
          break;
        }
      }
    }
    return held;
  };

  /** Length of the longest head of `s` that is the end of a secret (and not a whole one). */
  const heldHead = (s: string): number => {
    let held = 0;
    for (const { value: secret } of patterns) {
      for (let k = Math.min(secret.length - 1, s.length); k > held; k--) {
        if (s.startsWith(secret.slice(secret.length - k))) {
          held = k;
          break;
        }
      }
    }
    return held;
  };

  const splitSecret = (piece: string, side: "start" | "end"): number => {
    refresh();
    return active ? (side === "end" ? heldTail(piece) : heldHead(piece)) : 0;
  };

  const stream = (): TextStream => {
    let pending = "";
    return {
      push(piece) {
        refresh();
        if (!active && pending === "") return piece;
        const all = text(pending + piece);
        const held = heldTail(all);
        pending = all.slice(all.length - held);
        return all.slice(0, all.length - held);
      },
      end() {
        const rest = pending;
        pending = "";
        return rest;
      },
    };
  };

  return {
    get active() {
      refresh();
      return active;
    },
    add(secret: Secret) {
      added.push(secret);
      build([...secrets, ...added, ...(lastLive ?? [])]);
      active = patterns.length > 0;
    },
    text,
    value,
    stream,
    splitSecret,
  };
}

/** A copy of `v` with `text` applied to every string, sharing what did not change. */
function redactValue(v: unknown, text: (s: string) => string): unknown {
  if (typeof v === "string") return text(v);
  if (Array.isArray(v)) {
    let copy: unknown[] | undefined;
    v.forEach((item, i) => {
      const next = redactValue(item, text);
      if (next !== item) {
        copy ??= v.slice();
        copy[i] = next;
      }
    });
    return copy ?? v;
  }
  if (v !== null && typeof v === "object" && isPlain(v)) {
    let copy: Record<string, unknown> | undefined;
    for (const [key, item] of Object.entries(v)) {
      const next = redactValue(item, text);
      if (next !== item) {
        copy ??= { ...v };
        copy[key] = next;
      }
    }
    return copy ?? v;
  }
  return v;
}

const isPlain = (v: object) => {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
};

/** `logger` with its messages and fields redacted. */
export function redactLogger(logger: Logger, redactor: Redactor): Logger {
  if (!redactor.active) return logger;
  const wrap =
    (write: (m: string, f?: LogFields) => void) =>
    (m: string, f?: LogFields): void =>
      write(redactor.text(m), f && redactor.value(f));
  return {
    debug: wrap(logger.debug.bind(logger)),
    info: wrap(logger.info.bind(logger)),
    warn: wrap(logger.warn.bind(logger)),
    error: wrap(logger.error.bind(logger)),
  };
}
