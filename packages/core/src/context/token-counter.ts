import type { AgentMessage } from "@mariozechner/pi-agent-core";
import type { Tool } from "@mariozechner/pi-ai";
import { compactionToUser, isCompactionMessage } from "./compaction-message.js";

/** Tokens of per-message framing (role markers, separators) the wire formats add. */
const MESSAGE_OVERHEAD = 4;
/** What an image is assumed to cost (providers charge ~1-1.6k for a typical screenshot). */
const IMAGE_TOKENS = 1_600;

export interface TokenCounter {
  /** Loads the BPE tables (about 90 ms, once); counting before that uses the byte bound. */
  load(): Promise<void>;
  readonly loaded: boolean;
  /** Tokens of a text (BPE when loaded, else UTF-8 bytes: never less than the BPE count). */
  text(text: string): number;
  /** Tokens of one message, cached per message object: a turn only counts what is new. */
  message(m: AgentMessage): number;
  /** A cheap upper bound of a message's tokens (UTF-8 bytes), cached too. */
  messageBound(m: AgentMessage): number;
  /** Tokens of a system prompt (cached for the last string seen). */
  system(prompt: string): number;
  /** Tokens of the tool definitions (cached per tools array). */
  tools(tools: readonly Tool[]): number;
}

type Encoder = (text: string) => number;
let sharedEncoder: Encoder | undefined;
let loading: Promise<void> | undefined;
/**
 * BPE counts of tool definitions by content, shared by every thread: each thread builds its own
 * tool objects (bound to its workspace), but their definitions are the same few.
 */
const toolTokens = new Map<string, number>();
/**
 * Counts cached by object, shared by every counter: a message's count and a tools array's depend
 * on the object alone (and on whether the BPE is loaded: `exact` holds BPE counts, `bounds` byte
 * bounds), not on the thread asking. One set of tables for the process rather than four per
 * thread: an active thread holds less and the GC traces fewer weak tables.
 */
const exact = new WeakMap<object, number>();
const bounds = new WeakMap<object, number>();
/**
 * A tool schema serialised once per schema object: the tools' parameter schemas are module
 * constants shared by every thread's tool objects.
 */
const schemaText = new WeakMap<object, string>();

function schemaOf(tool: Tool): string {
  const parameters = tool.parameters as object;
  let text = schemaText.get(parameters);
  if (text === undefined) {
    text = JSON.stringify(parameters);
    schemaText.set(parameters, text);
  }
  return text;
}

/**
 * gpt-tokenizer's cl100k_base: chosen over js-tiktoken by bench/context (same ranks: loads in
 * ~75 ms vs ~240 ms, counts 7–9× faster; o200k would cost ~160 ms to load). Loaded lazily so a CLI start that never nears the
 * threshold never pays for it. Counts are tiktoken-exact for OpenAI models and a close estimate
 * for others; the budget's safety margin absorbs the difference. A text is counted piece by
 * piece (createPieceCounter): the BPE is quadratic in the length of what it merges, and one
 * long run without whitespace would otherwise hold the agents' thread for minutes.
 */
export function loadEncoder(): Promise<void> {
  if (sharedEncoder) return Promise.resolve();
  loading ??= Promise.all([
    import("gpt-tokenizer/encoding/cl100k_base"),
    import("gpt-tokenizer/encodingParams/constants"),
  ]).then(([m, { CL100K_TOKEN_SPLIT_REGEX }]) => {
    // Message text is plain text: the spelling of a special token ("<|endoftext|>") counts as
    // ordinary tokens, as providers encode it; countTokens' default throws on it instead. (No
    // piece holds a whole one, but this also spares a scan of every piece for them.)
    const plain = { disallowedSpecial: new Set<string>() };
    sharedEncoder = createPieceCounter({
      split: CL100K_TOKEN_SPLIT_REGEX,
      count: (piece) => m.countTokens(piece, plain),
    });
  });
  return loading;
}

/**
 * `loaded` reads module state only, so it sits on a shared prototype: an object literal with a
 * getter is a dictionary-mode object in V8 (a hash table of its properties, ~450 B more, and
 * slower lookups), and every thread runner has a counter.
 */
const counterPrototype = Object.defineProperty({}, "loaded", {
  get: () => sharedEncoder !== undefined,
});

export function createTokenCounter(): TokenCounter {
  let lastSystem: { prompt: string; tokens: number; exact: boolean } | undefined;

  const text = (s: string) =>
    s.length === 0 ? 0 : sharedEncoder ? sharedEncoder(s) : Buffer.byteLength(s, "utf8");

  const countMessage = (m: AgentMessage, count: (s: string) => number): number => {
    const msg = isCompactionMessage(m) ? compactionToUser(m) : m;
    let n = MESSAGE_OVERHEAD;
    const content = (msg as { content?: unknown }).content;
    if (typeof content === "string") return n + count(content);
    if (!Array.isArray(content)) return n;
    for (const block of content as Array<Record<string, unknown>>) {
      switch (block.type) {
        case "text":
          n += count(String(block.text ?? ""));
          break;
        case "thinking":
          n += count(String(block.thinking ?? ""));
          break;
        case "toolCall":
          n += count(String(block.name ?? "")) + count(JSON.stringify(block.arguments ?? {})) + 8;
          break;
        case "image":
          n += IMAGE_TOKENS;
          break;
      }
    }
    if ((msg as { role: string }).role === "toolResult") n += 8;
    return n;
  };

  const bytes = (s: string) => Buffer.byteLength(s, "utf8");

  const counter: Omit<TokenCounter, "loaded"> = {
    load: loadEncoder,
    text,
    message(m) {
      const cached = exact.get(m);
      if (cached !== undefined) return cached;
      if (!sharedEncoder) return this.messageBound(m);
      const n = countMessage(m, text);
      exact.set(m, n);
      return n;
    },
    messageBound(m) {
      const cached = bounds.get(m);
      if (cached !== undefined) return cached;
      const n = countMessage(m, bytes);
      bounds.set(m, n);
      return n;
    },
    system(prompt) {
      const isExact = sharedEncoder !== undefined;
      if (lastSystem && lastSystem.prompt === prompt && lastSystem.exact === isExact)
        return lastSystem.tokens;
      const tokens = text(prompt) + MESSAGE_OVERHEAD;
      lastSystem = { prompt, tokens, exact: isExact };
      return tokens;
    },
    tools(tools) {
      const key = tools as object;
      // Cached per array for the count in force (the byte bound until the BPE tables load).
      const cache = sharedEncoder ? exact : bounds;
      const cached = cache.get(key);
      if (cached !== undefined) return cached;
      let n = 0;
      for (const t of tools) {
        const schema = schemaOf(t);
        const definition = `${t.name}\n${t.description}\n${schema}`;
        let tokens = sharedEncoder ? toolTokens.get(definition) : undefined;
        if (tokens === undefined) {
          tokens = text(t.name) + text(t.description) + text(schema) + 12;
          if (sharedEncoder) {
            if (toolTokens.size >= 256) toolTokens.clear();
            toolTokens.set(definition, tokens);
          }
        }
        n += tokens;
      }
      cache.set(key, n);
      return n;
    },
  };
  return Object.assign(Object.create(counterPrototype) as TokenCounter, counter);
}

/**
 * Longest string the BPE is ever handed, in UTF-16 units. gpt-tokenizer's merge is quadratic in
 * the length of the string it merges (one pre-tokenized piece: a run of letters, digits,
 * punctuation or whitespace without a break): 20,000 letters took 0.7 s and 1,000,000 more than
 * 11 minutes on the agents' thread. Ordinary words are far shorter; at 128 a long run's count
 * stays within ~0.5% of the exact one (random letters +0.3%, runs of one character such as
 * spaces or dashes exact: their longest tokens are shorter).
 */
export const MAX_PIECE = 128;

/** Pieces whose counts are remembered; the table is emptied when full (see below). */
const CACHE_LIMIT = 32_768;

export interface PieceCounterOptions {
  /** The encoding's pre-tokenizer: the regex that cuts a text into the pieces BPE merges. */
  split: RegExp;
  /** The BPE count of one piece; never handed more than `maxPiece` characters. */
  count: (piece: string) => number;
  maxPiece?: number;
  cacheLimit?: number;
}

const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/**
 * Counts a text's tokens in time linear in its length: the text is cut into the pre-tokenizer's
 * own pieces (its regex, so the same pieces the BPE would merge), each is counted alone, and a
 * piece longer than `maxPiece` is counted in parts of `maxPiece` characters (never between the
 * halves of a surrogate pair). Without such a part the sum is the BPE count of the whole text.
 *
 * Counts are remembered per piece (words repeat) in a table that is emptied when full, which also
 * keeps repeats away from gpt-tokenizer's own merge cache: an LRU on a Map that deletes and
 * re-adds its entry on every hit, and V8 keeps deleted entries in their bucket's chain until the
 * next rehash, so once that cache was full (100k pieces) one word repeated 40,000 times (200 KB)
 * took 19 s.
 */
export function createPieceCounter(o: PieceCounterOptions): (text: string) => number {
  const flags = o.split.flags.includes("g") ? o.split.flags : `${o.split.flags}g`;
  const split = new RegExp(o.split.source, flags);
  const max = o.maxPiece ?? MAX_PIECE;
  const limit = o.cacheLimit ?? CACHE_LIMIT;
  const cache = new Map<string, number>();

  const countPiece = (piece: string): number => {
    let n = cache.get(piece);
    if (n === undefined) {
      n = o.count(piece);
      if (cache.size >= limit) cache.clear();
      cache.set(piece, n);
    }
    return n;
  };

  return (text) => {
    let n = 0;
    split.lastIndex = 0;
    for (let m = split.exec(text); m !== null; m = split.exec(text)) {
      const piece = m[0];
      if (piece.length === 0) {
        split.lastIndex++; // a pre-tokenizer never matches nothing; this only guards the loop
        continue;
      }
      if (piece.length <= max) {
        n += countPiece(piece);
        continue;
      }
      for (let i = 0; i < piece.length; ) {
        let end = Math.min(i + max, piece.length);
        if (end < piece.length && isLowSurrogate(piece.charCodeAt(end))) end--;
        n += countPiece(piece.slice(i, end));
        i = end;
      }
    }
    return n;
  };
}
