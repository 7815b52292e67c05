import { type FSWatcher, mkdirSync, readdirSync, renameSync, statSync, watch } from "node:fs";
import { join } from "node:path";
import { readTextNoFollow } from "../fs/no-follow.js";
import type { Logger } from "../logging/logger.js";
import { type EventSpec, eventIdOf, parseEventFile } from "./event-file.js";

/** What the watcher tells the bus. */
export interface EventWatcherHandlers {
  /** A new or changed valid file. `mtimeMs`: its modification time (an immediate event's slot). */
  loaded(event: EventSpec, mtimeMs: number): void;
  /** A file that went away (removed by the bus after firing, `guppy events rm`, the user). */
  removed(id: string): void;
  /** A file still invalid after its retries, renamed `<name>.invalid`. */
  invalid(id: string, problem: string, renamedTo: string): void;
}

export interface EventWatcherOptions {
  dir: string;
  logger: Logger;
  handlers: EventWatcherHandlers;
  /** Quiet time after a change before the file is read (default 100 ms): one read per save. */
  debounceMs?: number;
  /** Waits before each retry of a file that does not read (default 250, 500, 1000 ms). */
  retryDelaysMs?: readonly number[];
}

export interface EventWatcher {
  /**
   * Watches the folder and reads every event file there (the start scan; a small folder before
   * this returns). Resolves with the number of files once the scan is done.
   */
  start(): Promise<number>;
  stop(): void;
}

/** Files read per turn of the event loop in the start scan. */
const SCAN_CHUNK = 50;

interface Seen {
  mtimeMs: number;
  size: number;
}

/**
 * Watches `<home>/events/` (fs.watch, debounced) and reads each `*.json` there when it appears
 * or changes. A file that does not read — a writer that has not finished, or a mistake — is
 * tried again 3 times with a growing wait (a new change starts the count over); still invalid,
 * it is renamed `*.invalid` (so it is not read again at every start) and named with its problem.
 */
export function createEventWatcher(options: EventWatcherOptions): EventWatcher {
  const { dir, logger, handlers } = options;
  const debounceMs = options.debounceMs ?? 100;
  const delays = options.retryDelaysMs ?? [250, 500, 1000];
  const seen = new Map<string, Seen>();
  /** Files that failed to read: how many retries so far and the timer of the next. */
  const retrying = new Map<string, { tries: number; timer: NodeJS.Timeout }>();
  const changed = new Set<string>();
  let fullScan = false;
  let debounce: NodeJS.Timeout | undefined;
  let watcher: FSWatcher | undefined;
  let stopped = false;

  const check = (name: string, fromRetry = false) => {
    const id = eventIdOf(name);
    if (id === undefined || stopped) return;
    const path = join(dir, name);
    const pending = retrying.get(name);
    if (pending && !fromRetry) {
      // Changed again while waiting for a retry: a writer at work; its count starts over.
      clearTimeout(pending.timer);
      retrying.delete(name);
    }
    let stat: ReturnType<typeof statSync>;
    let text: string;
    try {
      stat = statSync(path);
      if (!stat.isFile()) return;
      const before = seen.get(name);
      if (before && before.mtimeMs === stat.mtimeMs && before.size === stat.size) return;
      text = readTextNoFollow(dir, path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
        logger.warn(`events: could not read ${path}`, { error: String(error) });
        return;
      }
      retrying.delete(name);
      if (seen.delete(name)) handlers.removed(id);
      return;
    }
    const parsed = parseEventFile(id, text);
    if (parsed.ok) {
      retrying.delete(name);
      seen.set(name, { mtimeMs: stat.mtimeMs, size: stat.size });
      handlers.loaded(parsed.event, stat.mtimeMs);
      return;
    }
    const tries = fromRetry ? (pending?.tries ?? 0) : 0;
    const delay = delays[tries];
    if (delay !== undefined) {
      const timer = setTimeout(() => check(name, true), delay);
      timer.unref();
      retrying.set(name, { tries: tries + 1, timer });
      return;
    }
    retrying.delete(name);
    if (seen.delete(name)) handlers.removed(id);
    const renamed = `${path}.invalid`;
    try {
      renameSync(path, renamed);
    } catch (error) {
      logger.warn(`events: could not rename ${path} to ${renamed}`, { error: String(error) });
    }
    handlers.invalid(id, parsed.problem, renamed);
  };

  const scan = () => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch (error) {
      logger.warn(`events: could not list ${dir}`, { error: String(error) });
      return;
    }
    const present = new Set(names);
    for (const name of [...seen.keys()]) if (!present.has(name)) check(name);
    for (const name of names) check(name);
  };

  /**
   * The start scan, `SCAN_CHUNK` files per turn of the event loop: 10,000 files take seconds to
   * read and schedule, and the gateway answers meanwhile. Resolves with how many files it read.
   */
  const startScan = (done: (count: number) => void) => {
    let names: string[];
    try {
      names = readdirSync(dir).filter((name) => eventIdOf(name) !== undefined);
    } catch (error) {
      logger.warn(`events: could not list ${dir}`, { error: String(error) });
      names = [];
    }
    let i = 0;
    const step = () => {
      if (stopped) return done(i);
      const end = Math.min(names.length, i + SCAN_CHUNK);
      for (; i < end; i++) check(names[i] as string);
      if (i < names.length) setImmediate(step);
      else done(names.length);
    };
    step();
  };

  const flush = () => {
    debounce = undefined;
    if (fullScan) {
      fullScan = false;
      changed.clear();
      scan();
      return;
    }
    const names = [...changed];
    changed.clear();
    for (const name of names) check(name);
  };

  return {
    start() {
      mkdirSync(dir, { recursive: true });
      try {
        watcher = watch(dir, (_type, filename) => {
          if (filename === null) fullScan = true;
          else if (eventIdOf(filename) !== undefined) changed.add(filename);
          else return;
          if (debounce) clearTimeout(debounce);
          debounce = setTimeout(flush, debounceMs);
        });
        watcher.on("error", (error) => {
          logger.warn(
            `events: watching ${dir} failed; new event files are read at the next start`,
            {
              error: String(error),
            },
          );
        });
      } catch (error) {
        logger.warn(`events: cannot watch ${dir}`, { error: String(error) });
      }
      return new Promise<number>((resolve) => startScan(resolve));
    },
    stop() {
      stopped = true;
      watcher?.close();
      if (debounce) clearTimeout(debounce);
      for (const { timer } of retrying.values()) clearTimeout(timer);
      retrying.clear();
    },
  };
}
