import { createHash } from "node:crypto";
import { join } from "node:path";
import { ConfigError } from "../config/config-error.js";

// Where a thread's files live: `<home>/<adapter>/<channel>/<thread>/`, its id encoded in the path.
// Dependency-free (node built-ins and the leaf ConfigError) so the HTTP worker can load it alone.

/** A thread folder's conversation as the model sees it (JSON lines of AgentMessage). */
export const CONTEXT_FILE = "context.jsonl";
/** A thread folder's human-readable history (JSON lines of LogEntry, no tool results). */
export const LOG_FILE = "log.jsonl";
/** A thread's figures as of its last deactivation, shown while no agent of it is loaded. */
export const THREAD_STATUS_FILE = "status.json";
/** How far into log.jsonl a channel's backfill has read. */
export const LOG_CURSOR_FILE = "log-cursor";
/** The thread's full id, written when a segment of its directory name was shortened. */
export const THREAD_ID_FILE = "thread-id";
/** The pid of the `guppy chat` that has the session open. */
export const CHAT_LOCK_FILE = "chat.lock";
/** Files a channel downloaded from a message. */
export const ATTACHMENTS_DIR = "attachments";
/** Oversized tool outputs, saved whole. */
export const ARTIFACTS_DIR = "artifacts";
/** The thread's workspace: tools resolve relative paths here. */
export const WORKSPACE_DIR = "scratch";

/** One line of a thread's log.jsonl: the human-readable history (no tool results). */
export interface LogEntry {
  /** ISO 8601. */
  date: string;
  messageId: string;
  userId: string;
  userName: string;
  text: string;
  isBot: boolean;
  attachments?: Array<{ original: string; local: string }>;
}

export function isLogEntry(value: unknown): value is LogEntry {
  if (value === null || typeof value !== "object") return false;
  const v = value as Record<string, unknown>;
  return typeof v.date === "string" && typeof v.text === "string" && typeof v.isBot === "boolean";
}

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

/** The directory of a thread's adapter: `<home>/<adapter>` (throws like `parseThreadId`). */
export function adapterDirOf(home: string, threadId: string): string {
  return join(home, parseThreadId(threadId).adapter);
}

/** The directory of a thread's channel: `<home>/<adapter>/<channel>`. */
export function channelDirOf(home: string, threadId: string): string {
  const ref = parseThreadId(threadId);
  return join(home, ref.adapter, encodeSegment(ref.channel));
}

/** The directory of a thread: `<home>/<adapter>/<channel>/<thread>`. */
export function threadDirOf(home: string, threadId: string): string {
  const ref = parseThreadId(threadId);
  return join(home, ref.adapter, encodeSegment(ref.channel), encodeSegment(ref.thread));
}

/** Directories of GUPPY_HOME that hold no threads. */
const NOT_ADAPTERS = new Set(["skills", "memory", "logs", "access"]);

/** Whether `<home>/<name>` may hold threads (not a data directory, not hidden). */
export function isAdapterDirName(name: string): boolean {
  return !NOT_ADAPTERS.has(name) && !name.startsWith(".");
}

/** Whether a channel's or thread's directory name may be a thread's (`skills` holds skills). */
export function isThreadPartName(name: string): boolean {
  return name !== "skills";
}

/** Whether the id of thread directory `<adapter>/<channel>/<thread>` is in its THREAD_ID_FILE. */
export function needsThreadIdFile(channel: string, thread: string): boolean {
  return isShortenedSegment(channel) || isShortenedSegment(thread);
}

/**
 * The canonical id of thread directory `<adapter>/<channel>/<thread>`: decoded from its names, or
 * `idFile` (its THREAD_ID_FILE's content) when `needsThreadIdFile`. Undefined for a directory
 * that is not a thread's (a name of the user's).
 */
export function threadIdOfDir(
  adapter: string,
  channel: string,
  thread: string,
  idFile?: string,
): string | undefined {
  try {
    return canonicalThreadId(
      needsThreadIdFile(channel, thread)
        ? (idFile ?? "").trim()
        : `${adapter}:${decodeSegment(channel)}:${decodeSegment(thread)}`,
    );
  } catch {
    return undefined;
  }
}
