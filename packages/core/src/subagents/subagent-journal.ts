import { existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { appendLines, forgetAppendState } from "../fs/durable-append.js";
import { readJsonl } from "../fs/jsonl.js";
import { writeFileAtomic } from "../fs/write.js";
import type { Logger } from "../logging/logger.js";
import type { SubagentInfo } from "../types.js";

/**
 * `<home>/subagents.jsonl` (a `guppy chat`: in its thread's folder): what became of each subagent
 * until its result is in its parent's inbox. A child's answer is in its own log and context as
 * soon as it ends; its `ended` line here carries it to the hand-over, and the `handed` line is
 * written once the parent's prompt with it was accepted (fsync'd in the inbox). A process killed
 * between the two hands it over at the next start — once: the `handed` line ends it. A child
 * that never ended (killed mid-run) is reported to its parent as interrupted.
 */
export type JournalLine =
  | { t: "spawned"; id: string; parent: string; label?: string; at: string }
  | { t: "ended"; id: string; state: Exclude<SubagentInfo["state"], "running">; answer: string }
  | { t: "handed"; ids: string[] };

/** A child whose result its parent has not got yet, as the journal says. */
export interface Unhanded {
  id: string;
  parent: string;
  label?: string;
  /** Undefined: it never ended (the process was killed while it ran). */
  ended?: { state: Exclude<SubagentInfo["state"], "running">; answer: string };
}

const isLine = (value: unknown): value is JournalLine =>
  value !== null && typeof value === "object" && typeof (value as { t?: unknown }).t === "string";

export interface SubagentJournal {
  write(line: JournalLine): void;
  /** The children not handed over, in the order spawned. */
  unhanded(): Unhanded[];
  /** Rewrites the journal with only the lines of children not handed over yet. */
  compact(): void;
}

export function createSubagentJournal(path: string, logger: Logger): SubagentJournal {
  const read = (): Unhanded[] => {
    if (!existsSync(path)) return [];
    const children = new Map<string, Unhanded>();
    for (const line of readJsonl(path, logger, isLine)) {
      if (line.t === "spawned") {
        children.set(line.id, {
          id: line.id,
          parent: line.parent,
          ...(line.label ? { label: line.label } : {}),
        });
      } else if (line.t === "ended") {
        const child = children.get(line.id);
        if (child) child.ended = { state: line.state, answer: line.answer };
      } else for (const id of line.ids) children.delete(id);
    }
    return [...children.values()];
  };
  return {
    write(line) {
      try {
        mkdirSync(dirname(path), { recursive: true });
        appendLines(path, [line]);
      } catch (error) {
        logger.warn(`Could not write ${path}`, { error: String(error) });
      }
    },
    unhanded: read,
    compact() {
      try {
        const lines: JournalLine[] = [];
        for (const child of read()) {
          lines.push({
            t: "spawned",
            id: child.id,
            parent: child.parent,
            ...(child.label ? { label: child.label } : {}),
            at: new Date().toISOString(),
          });
          if (child.ended) lines.push({ t: "ended", id: child.id, ...child.ended });
        }
        // The append descriptor would go on writing to the file renamed over.
        forgetAppendState(path);
        writeFileAtomic(path, lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
      } catch (error) {
        logger.warn(`Could not rewrite ${path}`, { error: String(error) });
      }
    },
  };
}
