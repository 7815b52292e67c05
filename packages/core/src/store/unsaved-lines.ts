import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { appendLines, forgetAppendState, serializeJsonl } from "../fs/durable-append.js";
import { writeFileAtomic } from "../fs/write.js";
import type { Logger } from "../logging/logger.js";

/**
 * Thread files' lines the disk had no room for (a full disk), kept in memory and written again
 * later: before the next line of the same file (so a file's lines keep their order), after any
 * line that could be written, and on a timer while any are kept. A thread's answer is never dropped because the disk was full for a
 * moment, and `whenSaved` says when a thread's lines are all on disk again: the orchestrator
 * marks a prompt done in the inbox only then.
 */
export interface UnsavedLines {
  /**
   * Appends `records` to `path` (of `threadId`), after the lines kept for it. When the disk is
   * full they are kept instead and 0 is returned; another error is thrown. Else the bytes
   * written.
   */
  append(threadId: string, path: string, records: readonly unknown[]): number;
  /**
   * Replaces the content of `path` with `records` (atomically), dropping the lines kept for it
   * (this content holds them). Kept to be written later when the disk is full.
   */
  rewrite(threadId: string, path: string, records: readonly unknown[]): void;
  /** What is kept for `path`: the whole content to write (`rewrite`) or lines to append. */
  kept(path: string): { rewrite: boolean; records: readonly unknown[] } | undefined;
  /** The file at `from` was renamed to `to` (its kept lines belong to the renamed file). */
  moved(from: string, to: string): void;
  /**
   * Resolves once every line kept for `threadId` is written; undefined when none is kept (the
   * thread's lines are all on disk).
   */
  whenSaved(threadId: string): Promise<void> | undefined;
  /** Tries to write everything kept now; true when nothing is kept any more. */
  retry(): boolean;
}

/** A write refused for want of room: the lines are kept and written again later. */
export function isNoSpace(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === "ENOSPC" || code === "EDQUOT";
}

interface Kept {
  threadId: string;
  /** Set when the whole file is to be written with `records` (a rewrite the disk refused). */
  rewrite: boolean;
  records: unknown[];
  /** A retry failed for another reason than room, and said so (once). */
  warned?: boolean;
}

/** How often kept lines are tried again while there are any (ms). */
export const UNSAVED_RETRY_MS = 5000;

// Long by design: one closure whose methods share the kept lines, their timer and waiters.
export function createUnsavedLines(options: { logger: Logger; retryMs?: number }): UnsavedLines {
  const { logger } = options;
  const retryMs = options.retryMs ?? UNSAVED_RETRY_MS;
  /** Path → what is kept for it, in the order first kept. */
  const byPath = new Map<string, Kept>();
  /** Thread id → who waits for its kept lines to be written. */
  const waiters = new Map<string, Array<() => void>>();
  let timer: ReturnType<typeof setInterval> | undefined;

  const keep = (threadId: string, path: string, records: readonly unknown[], rewrite: boolean) => {
    const kept = byPath.get(path);
    if (kept === undefined || rewrite) {
      byPath.set(path, { threadId, rewrite, records: [...records] });
      logger.debug(`Kept ${records.length} line(s) of ${path} in memory (the disk is full)`);
    } else kept.records.push(...records);
    if (timer === undefined) {
      timer = setInterval(() => retryAll(), retryMs);
      timer.unref?.();
    }
  };

  /** Writes what is kept for `path`; true when it is written (or nothing was kept). */
  const writeKept = (path: string): boolean => {
    const kept = byPath.get(path);
    if (kept === undefined) return true;
    try {
      if (kept.rewrite) {
        forgetAppendState(path);
        writeFileAtomic(path, serializeJsonl(kept.records));
      } else appendAt(path, kept.records);
    } catch (error) {
      if (!isNoSpace(error) && !kept.warned) {
        kept.warned = true;
        logger.warn(`Could not write the lines kept for ${path}; trying again later`, {
          error: String(error),
        });
      }
      return false;
    }
    byPath.delete(path);
    logger.debug(`Wrote the ${kept.records.length} line(s) of ${path} kept in memory`);
    settle(kept.threadId);
    return true;
  };

  /** Calls the thread's waiters when nothing of it is kept any more. */
  const settle = (threadId: string) => {
    for (const kept of byPath.values()) if (kept.threadId === threadId) return;
    const list = waiters.get(threadId);
    waiters.delete(threadId);
    for (const fn of list ?? []) fn();
  };

  const retryAll = (): boolean => {
    for (const path of [...byPath.keys()]) writeKept(path);
    if (byPath.size === 0 && timer !== undefined) {
      clearInterval(timer);
      timer = undefined;
    }
    return byPath.size === 0;
  };

  return {
    append(threadId, path, records) {
      if (records.length === 0) return 0;
      if (!writeKept(path)) {
        keep(threadId, path, records, false);
        return 0;
      }
      let bytes: number;
      try {
        bytes = appendAt(path, records);
      } catch (error) {
        if (!isNoSpace(error)) throw error;
        keep(threadId, path, records, false);
        return 0;
      }
      // There is room again: the other files' kept lines need not wait for the timer.
      if (byPath.size > 0) retryAll();
      return bytes;
    },
    rewrite(threadId, path, records) {
      forgetAppendState(path);
      try {
        writeFileAtomic(path, serializeJsonl(records));
      } catch (error) {
        if (!isNoSpace(error)) throw error;
        keep(threadId, path, records, true);
        return;
      }
      if (byPath.delete(path)) settle(threadId);
    },
    kept(path) {
      const kept = byPath.get(path);
      return kept && { rewrite: kept.rewrite, records: kept.records };
    },
    moved(from, to) {
      const kept = byPath.get(from);
      if (kept === undefined) return;
      byPath.delete(from);
      byPath.set(to, kept);
    },
    whenSaved(threadId) {
      let any = false;
      for (const kept of byPath.values()) if (kept.threadId === threadId) any = true;
      if (!any) return undefined;
      return new Promise<void>((resolve) => {
        const list = waiters.get(threadId) ?? [];
        list.push(resolve);
        waiters.set(threadId, list);
      });
    },
    retry: retryAll,
  };
}

/**
 * Appends to a thread file; when its directory is gone (removed by hand to reset the thread,
 * while it ran), it is made again and the lines go to a new file, not nowhere.
 */
function appendAt(path: string, records: readonly unknown[]): number {
  try {
    return appendLines(path, records);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    mkdirSync(dirname(path), { recursive: true });
    return appendLines(path, records);
  }
}
