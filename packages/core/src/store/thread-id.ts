import { createHash } from "node:crypto";
import { ConfigError } from "../config/config-error.js";

/** A thread id `adapter:channel:thread`, split into its parts. */
export interface ThreadRef {
  adapter: string;
  channel: string;
  thread: string;
}

const ADAPTER_RE = /^[a-z0-9][a-z0-9_-]{0,31}$/;
const MAX_SEGMENT = 96;

/**
 * Splits `adapter:channel:thread`. The thread part may itself hold colons; a missing thread part
 * becomes "default". The adapter name must be a short lowercase identifier.
 */
export function parseThreadId(threadId: string): ThreadRef {
  const first = threadId.indexOf(":");
  const adapter = first === -1 ? threadId : threadId.slice(0, first);
  if (!ADAPTER_RE.test(adapter)) {
    throw new ConfigError(
      `Invalid thread id ${JSON.stringify(threadId.slice(0, 80))}: it must start with an adapter name (a-z, 0-9, _ or -) followed by ":".`,
    );
  }
  const rest = first === -1 ? "" : threadId.slice(first + 1);
  const second = rest.indexOf(":");
  const channel = second === -1 ? rest : rest.slice(0, second);
  const thread = second === -1 ? "" : rest.slice(second + 1);
  return { adapter, channel: channel || "default", thread: thread || "default" };
}

/**
 * The one spelling of a thread id: `adapter:channel:thread` with the defaults filled in
 * ("http:api" and "http:api:default" are one thread, one directory). Throws like `parseThreadId`.
 */
export function canonicalThreadId(threadId: string): string {
  // The common case, checked without taking the id apart: adapter, channel and thread all there.
  const first = threadId.indexOf(":");
  const second = first === -1 ? -1 : threadId.indexOf(":", first + 1);
  if (second > first + 1 && second < threadId.length - 1 && ADAPTER_PREFIX_RE.test(threadId)) {
    return threadId;
  }
  const ref = parseThreadId(threadId);
  return `${ref.adapter}:${ref.channel}:${ref.thread}`;
}

/** An adapter name and its colon at the start of an id (ADAPTER_RE's rule). */
const ADAPTER_PREFIX_RE = /^[a-z0-9][a-z0-9_-]{0,31}:/;

/**
 * Encodes one id segment as a single safe path component: every byte outside [A-Za-z0-9_.-] is
 * percent-encoded, a leading dot is encoded (no `.`, `..` or hidden names), and ids longer than
 * the limit keep a readable prefix plus a hash of the whole id so distinct ids never collide.
 */
export function encodeSegment(segment: string): string {
  let out = "";
  for (const byte of Buffer.from(segment, "utf8")) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9_.-]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  if (out.startsWith(".")) out = `%2E${out.slice(1)}`;
  if (out === "") out = "%00empty";
  if (out.length > MAX_SEGMENT) {
    const hash = createHash("sha256").update(segment).digest("hex").slice(0, 16);
    out = `${out.slice(0, MAX_SEGMENT - 18)}~${hash}`;
  }
  return out;
}

/** Whether encodeSegment shortened a segment (a readable prefix, "~" and a hash of the whole). */
export function isShortenedSegment(encoded: string): boolean {
  return /~[0-9a-f]{16}$/.test(encoded);
}

/** Inverse of encodeSegment for segments that were not shortened. */
export function decodeSegment(encoded: string): string {
  if (encoded === "%00empty") return "";
  return decodeURIComponent(encoded);
}
