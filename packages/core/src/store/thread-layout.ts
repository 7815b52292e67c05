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
/** A thread folder's subagents: each child's own folder, `sub-<n>`. */
export const SUBAGENTS_DIR = "subagents";

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
  /**
   * Set on a message guppy sent here from another thread's run (the `send_message` tool): that
   * thread's id. Such a line is guppy's, yet it is synced into this thread's context before its
   * next run (backfill), so its agent knows what was said here.
   */
  sentFrom?: string;
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
  const ref = { adapter, channel: channel || "default", thread: thread || "default" };
  const reserved = reservedPartOf(threadId, ref);
  if (reserved) throw new ConfigError(reserved);
  return ref;
}

/**
 * The one spelling of a thread id: `adapter:channel:thread` with the defaults filled in
 * ("http:api" and "http:api:default" are one thread, one directory). Throws like `parseThreadId`.
 */
export function canonicalThreadId(threadId: string): string {
  // The common case, checked without taking the id apart: adapter, channel and thread all there.
  const first = threadId.indexOf(":");
  const second = first === -1 ? -1 : threadId.indexOf(":", first + 1);
  if (
    second > first + 1 &&
    second < threadId.length - 1 &&
    ADAPTER_PREFIX_RE.test(threadId) &&
    !RESERVED_TOP.has(threadId.slice(0, first)) &&
    isThreadPartName(threadId.slice(first + 1, second)) &&
    isThreadPartName(threadId.slice(second + 1))
  ) {
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

/**
 * The directory of a thread: `<home>/<adapter>/<channel>/<thread>`; a subagent's
 * (`…:<thread>~sub-<n>`) is `<its parent's>/subagents/sub-<n>`.
 */
export function threadDirOf(home: string, threadId: string): string {
  const ref = parseThreadId(threadId);
  const child = subagentOfRef(ref);
  if (child) {
    return join(threadDirOf(home, child.parentId), SUBAGENTS_DIR, `sub-${child.n}`);
  }
  return join(home, ref.adapter, encodeSegment(ref.channel), encodeSegment(ref.thread));
}

/**
 * A subagent's thread part: its parent's with `~sub-<n>` added. The `~` is taken as the mark of
 * a child only there, at the end and followed by `sub-` and a number; anywhere else it is part of
 * the name as before.
 */
const SUBAGENT_RE = /^(.+)~sub-([1-9][0-9]{0,5})$/;

/** The thread id of a parent's `n`th subagent: its thread part with `~sub-<n>` added. */
export function subagentThreadId(parentId: string, n: number): string {
  const ref = parseThreadId(parentId);
  return `${ref.adapter}:${ref.channel}:${ref.thread}~sub-${n}`;
}

/** The parent thread and number of a subagent's id; undefined for any other thread. */
export function subagentOf(threadId: string): { parentId: string; n: number } | undefined {
  return subagentOfRef(parseThreadId(threadId));
}

function subagentOfRef(ref: ThreadRef): { parentId: string; n: number } | undefined {
  const m = SUBAGENT_RE.exec(ref.thread);
  if (!m?.[1] || !m[2]) return undefined;
  return { parentId: `${ref.adapter}:${ref.channel}:${m[1]}`, n: Number(m[2]) };
}

/**
 * A group member's own conversation (GUPPY_GROUP_CONTEXT=per-user): the group's thread part with
 * `~u<user id>` added. Unlike a subagent's `~sub-<n>` it is a thread of its own — its own folder
 * beside the group's (`<thread>%7Eu<user>`), its own /new, listed by GET /v1/threads — as the
 * member's history belongs to no other thread. A member's thread may have subagents like any.
 */
const MEMBER_RE = /^(.+)~u([^~]+)$/;

/** The thread id of `userId`'s own conversation in group thread `threadId`. */
export function memberThreadId(threadId: string, userId: string): string {
  const ref = parseThreadId(threadId);
  return `${ref.adapter}:${ref.channel}:${ref.thread}~u${userId}`;
}

/** The group thread and member of a member's thread id; undefined for any other thread. */
export function memberOf(threadId: string): { groupId: string; userId: string } | undefined {
  const ref = parseThreadId(threadId);
  const m = MEMBER_RE.exec(ref.thread);
  if (!m?.[1] || !m[2] || subagentOfRef(ref)) return undefined;
  return { groupId: `${ref.adapter}:${ref.channel}:${m[1]}`, userId: m[2] };
}

/**
 * Names guppy uses at the top of GUPPY_HOME that an adapter name could spell: a thread id whose
 * adapter is one of them would put its folders where guppy keeps its own (a directory made where
 * the access store expects a file stops the gateway from starting).
 */
const RESERVED_TOP = new Set(["access", "logs", "events", "memory", "skills", "api-token"]);

/**
 * Names guppy uses inside adapter, channel and thread folders (lower-cased: on a case-insensitive
 * file system `memory.md` is MEMORY.md). A channel or thread part spelling one is refused.
 */
const RESERVED_PART = new Set(
  [
    "skills",
    "MEMORY.md",
    ATTACHMENTS_DIR,
    ARTIFACTS_DIR,
    WORKSPACE_DIR,
    CONTEXT_FILE,
    LOG_FILE,
    THREAD_STATUS_FILE,
    LOG_CURSOR_FILE,
    THREAD_ID_FILE,
    CHAT_LOCK_FILE,
    "chat-inbox.jsonl",
    "inbox.jsonl",
  ].map((name) => name.toLowerCase()),
);

/** Whether `<home>/<name>` may hold threads (not a data directory, not hidden). */
export function isAdapterDirName(name: string): boolean {
  return !RESERVED_TOP.has(name) && !name.startsWith(".");
}

/** Whether a channel's or thread's directory name may be a thread's (`skills` holds skills). */
export function isThreadPartName(name: string): boolean {
  return !RESERVED_PART.has(name.toLowerCase());
}

/** The reason an id's parts would land on guppy's own files, or undefined when they do not. */
function reservedPartOf(threadId: string, ref: ThreadRef): string | undefined {
  if (RESERVED_TOP.has(ref.adapter)) {
    return `Invalid thread id ${JSON.stringify(threadId.slice(0, 80))}: "${ref.adapter}" is a name guppy uses for its own files at the top of its home; choose another adapter name.`;
  }
  for (const [what, part] of [
    ["channel", ref.channel],
    ["thread", ref.thread],
  ] as const) {
    if (!isThreadPartName(part)) {
      return `Invalid thread id ${JSON.stringify(threadId.slice(0, 80))}: its ${what} part "${part}" is a name guppy uses for its own files; choose another.`;
    }
  }
  return undefined;
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
