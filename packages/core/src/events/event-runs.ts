import { closeSync, fdatasyncSync, mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";
import { readJsonl } from "../fs/jsonl.js";
import { appendFully, writeFileAtomic } from "../fs/write.js";
import type { Logger } from "../logging/logger.js";
import type { RunRecord } from "../state/types.js";

/** `<home>/events/.runs.jsonl`: what happened to each event's time slots. */
export const RUNS_FILE = ".runs.jsonl";

export type { RunRecord } from "../state/types.js";

function isRecord(value: unknown): value is RunRecord {
  const r = value as RunRecord;
  return (
    typeof r === "object" &&
    r !== null &&
    typeof r.id === "string" &&
    typeof r.slot === "number" &&
    typeof r.status === "string"
  );
}

/** The durable per-event, per-slot journal the bus consults before every firing. */
export interface RunsJournal {
  /** The latest slot recorded for `id` (any status), epoch ms. */
  lastSlot(id: string): number | undefined;
  /** Appends and fsyncs records in one write (throws if the disk refuses: they are not sent). */
  record(records: readonly RunRecord[]): void;
  /** Rewrites the journal with the last record of each event, those `keep` says (others go). */
  compact(keep: (last: RunRecord) => boolean): void;
  close(): void;
}

/**
 * Opens (creating if missing) the journal at `path`. Only the last slot per event is kept in
 * memory; the file is compacted to one line per live event at `compact`, which the bus calls at
 * start and whenever the appended lines outnumber twice the events (a 2 s periodic event writes
 * 43,200 lines a day).
 */
export function openRunsJournal(path: string, logger: Logger): RunsJournal {
  mkdirSync(dirname(path), { recursive: true });
  const last = new Map<string, RunRecord>();
  for (const r of readJsonl(path, logger, isRecord)) {
    const prev = last.get(r.id);
    if (!prev || r.slot >= prev.slot) last.set(r.id, r);
  }
  let fd: number | undefined;
  return {
    lastSlot: (id) => last.get(id)?.slot,
    record(records) {
      if (records.length === 0) return;
      fd ??= openSync(path, "a");
      appendFully(fd, records.map((r) => `${JSON.stringify(r)}\n`).join(""));
      fdatasyncSync(fd);
      for (const r of records) {
        const prev = last.get(r.id);
        if (!prev || r.slot >= prev.slot) last.set(r.id, r);
      }
    },
    compact(keep) {
      for (const [id, r] of [...last]) if (!keep(r)) last.delete(id);
      const text = [...last.values()].map((r) => `${JSON.stringify(r)}\n`).join("");
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
      writeFileAtomic(path, text);
    },
    close() {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}
