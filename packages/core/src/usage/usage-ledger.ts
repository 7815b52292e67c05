import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import type { Api, Model, Usage } from "@mariozechner/pi-ai";
import { appendLines } from "../fs/durable-append.js";
import type { Logger } from "../logging/logger.js";
import type { UsageRecord } from "../state/types.js";

// The usage ledger: one JSON line per model request (runs, compaction summaries, heartbeats,
// subagents), appended by whichever process made the request and never rewritten, so `/new`,
// a compaction or a restart loses none of it. `guppy usage`, `/status` and `GET /v1/status`
// total it (usage-totals.ts).

/** `<home>/usage.jsonl`. */
export const USAGE_FILE = "usage.jsonl";

export type { UsageRecord } from "../state/types.js";

export interface UsageRecorderOptions {
  home: string;
  threadId: string;
  model: Model<Api>;
  /** The key is a subscription's sign-in (`ResolvedModel.subscription`). */
  subscription?: boolean;
  logger?: Logger;
  /** Tests: the clock. */
  now?: () => Date;
}

/**
 * What a thread's runner calls with each request's usage: appends its line to the ledger. A
 * failed append (a full disk) is logged and the run goes on: bookkeeping never fails a run.
 */
export function createUsageRecorder(options: UsageRecorderOptions): (usage: Usage) => void {
  const path = join(options.home, USAGE_FILE);
  const model = `${options.model.provider}/${options.model.id}`;
  const now = options.now ?? (() => new Date());
  return (usage) => {
    const record: UsageRecord = {
      time: now().toISOString(),
      thread: options.threadId,
      model,
      input: usage.input,
      cacheRead: usage.cacheRead,
      cacheWrite: usage.cacheWrite,
      output: usage.output,
      cost: options.subscription ? 0 : (usage.cost?.total ?? 0),
      ...(options.subscription ? { subscription: true as const } : {}),
    };
    try {
      ensurePrivate(path);
      appendLines(path, [record]);
    } catch (error) {
      options.logger?.error(`Could not record a request's usage in ${path}`, {
        error: String(error),
      });
    }
  };
}

/** Paths known to exist: the ledger is created once, mode 600 (it tells what was used when). */
const created = new Set<string>();
function ensurePrivate(path: string): void {
  if (created.has(path)) return;
  closeSync(openSync(path, "a", 0o600));
  created.add(path);
}

/** How much of the ledger is read at a time: the file is folded, never held whole. */
const CHUNK_BYTES = 1 << 20;

/**
 * Calls `each` with every record on the whole lines of the ledger at `path` from byte `offset`
 * (a line still being written is left for the next read), in one pass of 1 MiB reads; returns
 * the offset to read from next time, or "restart" when the file is shorter than `offset` (it was
 * replaced). A line that is not a record (torn by a killed writer) is counted in `skipped`.
 */
export function foldUsageLedger(
  path: string,
  offset: number,
  each: (record: UsageRecord) => void,
): { end: number; skipped: number } | "restart" {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    return offset === 0 ? { end: 0, skipped: 0 } : "restart";
  }
  try {
    const size = fstatSync(fd).size;
    if (size < offset) return "restart";
    const buf = Buffer.alloc(Math.min(CHUNK_BYTES, Math.max(size - offset, 1)));
    let skipped = 0;
    let pos = offset;
    /** Bytes at the start of `buf` carried over from the last read (a line cut by the chunk). */
    let carried = 0;
    while (pos + carried < size) {
      const want = Math.min(buf.length - carried, size - pos - carried);
      const got = readSync(fd, buf, carried, want, pos + carried);
      if (got === 0) break;
      const filled = carried + got;
      let start = 0;
      for (let nl = buf.indexOf(0x0a, 0); nl !== -1 && nl < filled; nl = buf.indexOf(0x0a, start)) {
        const record = parseRecord(buf.toString("utf8", start, nl));
        if (record) each(record);
        else if (nl > start) skipped++;
        start = nl + 1;
      }
      pos += start;
      carried = filled - start;
      if (start === 0) {
        // One line longer than the buffer: no record is that long; skip to its end.
        const rest = skipLine(fd, pos + filled, size);
        if (rest === undefined) break;
        skipped++;
        pos = rest;
        carried = 0;
        continue;
      }
      buf.copy(buf, 0, start, filled);
    }
    return { end: pos, skipped };
  } finally {
    closeSync(fd);
  }
}

/** The offset after the next newline at or past `from`, or undefined when the file ends first. */
function skipLine(fd: number, from: number, size: number): number | undefined {
  const buf = Buffer.alloc(64 * 1024);
  for (let pos = from; pos < size; ) {
    const got = readSync(fd, buf, 0, Math.min(buf.length, size - pos), pos);
    if (got === 0) return undefined;
    const nl = buf.indexOf(0x0a);
    if (nl !== -1 && nl < got) return pos + nl + 1;
    pos += got;
  }
  return undefined;
}

const numeric = ["input", "cacheRead", "cacheWrite", "output", "cost"] as const;

function parseRecord(line: string): UsageRecord | undefined {
  if (line.trim() === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const r = value as Record<string, unknown>;
  if (typeof r.time !== "string" || typeof r.thread !== "string" || typeof r.model !== "string") {
    return undefined;
  }
  for (const key of numeric) if (typeof r[key] !== "number") return undefined;
  return value as UsageRecord;
}
