import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { AgentMessage } from "@mariozechner/pi-agent-core";
import {
  forgetAppendState,
  makeDirectoryAsync,
  openAppendFd,
  openForAppendAsync,
} from "../fs/durable-append.js";
import { type JsonlTail, readJsonl, readJsonlBefore, readJsonlFrom } from "../fs/jsonl.js";
import { overwriteInPlace, writeFileAtomic } from "../fs/write.js";
import { type Logger, silentLogger } from "../logging/logger.js";
import type { Redactor } from "../logging/redact.js";
import type { SavedThreadStatus } from "../types.js";
import {
  ARTIFACTS_DIR,
  adapterDirOf,
  CONTEXT_FILE,
  channelDirOf,
  isAdapterDirName,
  isLogEntry,
  isShortenedSegment,
  isThreadPartName,
  LOG_FILE,
  type LogEntry,
  needsThreadIdFile,
  THREAD_ID_FILE,
  THREAD_STATUS_FILE,
  threadDirOf,
  threadIdOfDir,
  WORKSPACE_DIR,
} from "./thread-layout.js";
import { parseSavedStatus } from "./thread-status-file.js";
import { createUnsavedLines } from "./unsaved-lines.js";

/** Per-thread filesystem state under GUPPY_HOME, in the layout `<home>/<adapter>/<channel>/<thread>/`. */
export interface Store {
  readonly home: string;
  transportDir(threadId: string): string;
  channelDir(threadId: string): string;
  threadDir(threadId: string): string;
  /** The thread's directory, created if it is not there yet (once per process). */
  ensureThreadDir(threadId: string): string;
  /**
   * The thread's workspace (`scratch/`): tools resolve relative paths here. Not created here:
   * `bash` creates it before its first command and `write` creates parent directories.
   */
  workspaceDir(threadId: string): string;
  /** Where oversized tool outputs are saved (`artifacts/`), created on demand. */
  artifactsDir(threadId: string): string;

  /** The path of the thread's log.jsonl (for a reader elsewhere, e.g. the HTTP API's worker). */
  logFile(threadId: string): string;
  /**
   * Appends to log.jsonl. On a full disk the entry is kept in memory and written later (see
   * `whenSaved`), not thrown; `readLog` reads what is on disk.
   */
  appendLog(threadId: string, entry: LogEntry): void;
  readLog(threadId: string): LogEntry[];
  /** The log entries appended after byte `offset` (see `readJsonlFrom`): no re-read of history. */
  readLogFrom(threadId: string, offset: number): JsonlTail<LogEntry>;
  /**
   * The log entries in the last `LOG_RESUME_WINDOW` bytes before byte `offset`, or undefined when
   * `offset` is no longer a line's end in the file (see `readJsonlBefore`).
   */
  readLogBefore(threadId: string, offset: number): LogEntry[] | undefined;

  /**
   * `value` with configured secrets taken out, as the store writes log entries and context (the
   * inbox journal uses it too); `value` itself without a redactor.
   */
  redact<T>(value: T): T;
  /** The thread's context: context.jsonl with the messages kept in memory for it after them. */
  loadContext(threadId: string): AgentMessage[];
  /**
   * Appends messages to context.jsonl (the common, cheap path after each turn). On a full disk
   * they are kept in memory and written later (see `whenSaved`), not thrown.
   */
  appendContext(threadId: string, messages: readonly AgentMessage[]): void;
  /** Rewrites context.jsonl atomically (after a compaction or a repair); kept like appends. */
  saveContext(threadId: string, messages: readonly AgentMessage[]): void;
  /**
   * Resolves once the log entries and context messages kept in memory for the thread (the disk
   * was full) are written — tried again before its next append and every few seconds; undefined
   * when nothing of it is kept. What a run wrote is on disk only then.
   */
  whenSaved(threadId: string): Promise<void> | undefined;
  /** Moves context.jsonl aside (`context-<time>.jsonl`) so the thread starts fresh; returns the archive path. */
  archiveContext(threadId: string): string | undefined;
  /** Thread ids that have a directory on disk. */
  listThreads(): string[];
  /**
   * Writes the thread's `status.json` in place (see `overwriteInPlace`; not fsync'd). Nothing is
   * written when the thread has no directory (never ran, or removed by hand): a lone status file
   * would list a thread that is gone.
   */
  saveStatus(threadId: string, status: SavedThreadStatus): void;
  /** The thread's `status.json`, or undefined when there is none or it does not parse. */
  readStatus(threadId: string): SavedThreadStatus | undefined;
  /**
   * Creates the thread's directory, log.jsonl and context.jsonl off the event loop if missing, and
   * keeps them open for the appends of its next run (the orchestrator calls it before a run of an
   * inactive thread). Rejects when they cannot be created; the run then reports the same error.
   */
  openFiles(threadId: string): Promise<void>;
  /**
   * Closes the thread's files kept open between appends and forgets what it knew of them (its
   * actor went idle): the next `openFiles` creates its directory again if it was removed.
   */
  closeFiles(threadId: string): void;
}

/**
 * How much of a thread's log before its saved cursor a new log tail reads for message ids (to
 * recognise a message delivered again): about the last few hundred entries.
 */
export const LOG_RESUME_WINDOW = 64 * 1024;

/** Appends a thread's log mirror holds before it is dropped (the next read goes to the file). */
const MAX_MIRRORED = 256;

// Long by design: one closure per home whose methods share the path, directory and log caches.
export function createStore(options: {
  home: string;
  logger?: Logger;
  /** Applied to every log entry and context message before it is written (configured secrets). */
  redactor?: Redactor;
  /** How often lines kept on a full disk are tried again (ms; tests use a short one). */
  unsavedRetryMs?: number;
}): Store {
  const home = options.home;
  const logger = options.logger ?? silentLogger;
  const unsaved = createUnsavedLines({ logger, retryMs: options.unsavedRetryMs });
  const redact = options.redactor?.active ? options.redactor.value : <T>(v: T) => v;
  const ensured = new Set<string>();

  const ensure = (dir: string) => {
    if (!ensured.has(dir)) {
      mkdirSync(dir, { recursive: true });
      ensured.add(dir);
    }
    return dir;
  };

  /** Thread id → its directory and files: worked out a dozen times per run, so kept (bounded). */
  const threadPaths = new Map<string, { dir: string; log: string; context: string }>();
  const pathsOf = (threadId: string) => {
    let paths = threadPaths.get(threadId);
    if (paths === undefined) {
      const dir = threadDirOf(home, threadId);
      paths = { dir, log: join(dir, LOG_FILE), context: join(dir, CONTEXT_FILE) };
      if (threadPaths.size >= 4096) threadPaths.clear();
      threadPaths.set(threadId, paths);
    }
    return paths;
  };
  const threadDir = (threadId: string) => pathsOf(threadId).dir;
  /**
   * What this process appended to a thread's log.jsonl since its tail was last read (bytes `from`
   * to `to`): the next `readLogFrom(from)` takes these records from memory when the file's size
   * says nobody else wrote, instead of reading and parsing them back. Kept while the thread's
   * files are open.
   */
  const logMirrors = new Map<string, { from: number; to: number; records: LogEntry[] }>();
  /** The thread's file, its directory created first if this process has not yet. */
  const file = (threadId: string, name: "log" | "context") => {
    const paths = pathsOf(threadId);
    ensure(paths.dir);
    return paths[name];
  };
  /** Appends to the thread's file (0 bytes: kept in memory, the disk is full). */
  const append = (threadId: string, name: "log" | "context", records: readonly unknown[]) =>
    unsaved.append(threadId, file(threadId, name), records);

  return {
    home,
    transportDir: (threadId) => adapterDirOf(home, threadId),
    channelDir: (threadId) => channelDirOf(home, threadId),
    threadDir,
    ensureThreadDir: (threadId) => ensure(threadDir(threadId)),
    workspaceDir: (threadId) => join(threadDir(threadId), WORKSPACE_DIR),
    artifactsDir: (threadId) => ensure(join(threadDir(threadId), ARTIFACTS_DIR)),

    redact,
    logFile: (threadId) => pathsOf(threadId).log,
    appendLog(threadId, given) {
      const entry = redact(given);
      const bytes = append(threadId, "log", [entry]);
      const mirror = logMirrors.get(threadId);
      if (mirror === undefined) return;
      // Kept for later: the file is read when it is written.
      if (bytes === 0) logMirrors.delete(threadId);
      else if (mirror.records.length >= MAX_MIRRORED) logMirrors.delete(threadId);
      else {
        mirror.to += bytes;
        mirror.records.push(entry);
      }
    },
    readLog(threadId) {
      return readJsonl(pathsOf(threadId).log, logger, isLogEntry);
    },
    readLogFrom(threadId, offset) {
      const path = pathsOf(threadId).log;
      const mirror = logMirrors.get(threadId);
      if (mirror?.from === offset && openAppendFd(path)?.size === mirror.to) {
        logMirrors.set(threadId, { from: mirror.to, to: mirror.to, records: [] });
        return { records: mirror.records, end: mirror.to };
      }
      const tail = readJsonlFrom(path, offset, logger, isLogEntry);
      if ("restart" in tail) logMirrors.delete(threadId);
      else logMirrors.set(threadId, { from: tail.end, to: tail.end, records: [] });
      return tail;
    },

    readLogBefore(threadId, offset) {
      return readJsonlBefore(pathsOf(threadId).log, offset, LOG_RESUME_WINDOW, isLogEntry);
    },

    loadContext(threadId) {
      const path = pathsOf(threadId).context;
      const kept = unsaved.kept(path);
      const messages = kept?.rewrite ? [] : readJsonl(path, logger, isAgentMessage);
      return kept ? [...messages, ...(kept.records as AgentMessage[])] : messages;
    },
    appendContext(threadId, messages) {
      append(threadId, "context", redact(messages));
    },
    saveContext(threadId, messages) {
      unsaved.rewrite(threadId, file(threadId, "context"), redact(messages));
    },
    whenSaved: (threadId) => unsaved.whenSaved(threadId),
    archiveContext(threadId) {
      const current = pathsOf(threadId).context;
      forgetAppendState(current);
      const kept = unsaved.kept(current) !== undefined;
      if (!existsSync(current) && !kept) return undefined;
      const stamp = new Date().toISOString().replace(/[:.]/g, "-");
      const target = join(threadDir(threadId), `context-${stamp}.jsonl`);
      if (existsSync(current)) renameSync(current, target);
      // What is kept for the context belongs to the conversation that is put aside.
      unsaved.moved(current, target);
      return target;
    },
    async openFiles(threadId) {
      const { dir, log, context } = pathsOf(threadId);
      if (!ensured.has(dir)) {
        await makeDirectoryAsync(dir);
        // A directory named after a shortened id says which thread it is (see `listThreads`).
        if (isShortenedSegment(basename(dir)) || isShortenedSegment(basename(dirname(dir)))) {
          const file = join(dir, THREAD_ID_FILE);
          if (!existsSync(file)) writeFileAtomic(file, `${threadId}\n`);
        }
      }
      ensured.add(dir);
      await Promise.all([openForAppendAsync(log), openForAppendAsync(context)]);
    },
    closeFiles(threadId) {
      logMirrors.delete(threadId);
      const { dir, log, context } = pathsOf(threadId);
      forgetAppendState(log);
      forgetAppendState(context);
      // An idle thread keeps nothing here: its next run looks for its directory again (a user
      // may remove it to reset the thread), and a gateway that has seen many threads does not
      // hold their paths.
      ensured.delete(dir);
      ensured.delete(join(dir, ARTIFACTS_DIR));
      threadPaths.delete(threadId);
    },
    saveStatus(threadId, status) {
      const path = join(threadDir(threadId), THREAD_STATUS_FILE);
      try {
        overwriteInPlace(path, `${JSON.stringify(status)}\n`);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      }
    },
    readStatus(threadId) {
      let text: string;
      try {
        text = readFileSync(join(threadDir(threadId), THREAD_STATUS_FILE), "utf8");
      } catch {
        return undefined;
      }
      const status = parseSavedStatus(text);
      if (!status) logger.warn(`Ignored ${THREAD_STATUS_FILE} of ${threadId}: not a saved status`);
      return status;
    },
    listThreads() {
      // Directory listings only, no stat of each thread's files: this runs on the agents' thread.
      const out: string[] = [];
      for (const adapter of safeDirs(home).filter(isAdapterDirName)) {
        for (const channel of safeDirs(join(home, adapter)).filter(isThreadPartName)) {
          for (const thread of safeDirs(join(home, adapter, channel)).filter(isThreadPartName)) {
            const dir = join(home, adapter, channel, thread);
            const idFile = needsThreadIdFile(channel, thread) ? readIdFile(dir) : undefined;
            const id = threadIdOfDir(adapter, channel, thread, idFile);
            if (id !== undefined) out.push(id);
          }
        }
      }
      return out;
    },
  };
}

function readIdFile(dir: string): string | undefined {
  try {
    return readFileSync(join(dir, THREAD_ID_FILE), "utf8");
  } catch {
    return undefined;
  }
}

/** The directories in `dir` (links to directories too); none when it cannot be read. */
function safeDirs(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter(
        (entry) => entry.isDirectory() || (entry.isSymbolicLink() && isDirectory(dir, entry.name)),
      )
      .map((entry) => entry.name);
  } catch {
    return [];
  }
}

function isDirectory(dir: string, name: string): boolean {
  try {
    return statSync(join(dir, name)).isDirectory();
  } catch {
    return false;
  }
}

function isAgentMessage(value: unknown): value is AgentMessage {
  if (value === null || typeof value !== "object") return false;
  const role = (value as { role?: unknown }).role;
  return typeof role === "string";
}
