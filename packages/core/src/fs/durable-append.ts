import { closeSync, fstatSync, fsyncSync, mkdir, open, openSync, readSync } from "node:fs";
import {
  appendFileBound,
  isDescriptorShortage,
  openFilesLimit,
  readProcessLimits,
  retryOnDescriptorShortage,
} from "./descriptor-budget.js";
import { appendFully, fileWriteError } from "./write.js";

/** Records as JSON lines, each ending in a newline ("" for none). */
export function serializeJsonl(records: readonly unknown[]): string {
  return records.length === 0 ? "" : `${records.map((r) => JSON.stringify(r)).join("\n")}\n`;
}

/**
 * Appends whole JSON lines in one write, to a file kept open between appends, and returns how
 * many bytes it wrote: the file grew by exactly that much unless another process appended too.
 * Not fsync'd: the lines survive a killed process, not a power cut (the inbox journal, which must,
 * syncs its own file). A torn last line (a writer died mid-line) gets a newline first so it
 * cannot swallow the new record. An append the disk takes only part of (it is full) throws, and
 * what got out is cut off again: no half line for the next append to be glued to.
 */
export function appendLines(path: string, records: readonly unknown[]): number {
  if (records.length === 0) return 0;
  const body = serializeJsonl(records);
  const file = openForAppend(path);
  try {
    // First append to this file since it was opened: check how the last writer left it.
    const prefix = !file.whole && endsTorn(file.fd, fstatSync(file.fd).size) ? "\n" : "";
    let bytes: number;
    try {
      bytes = appendFully(file.fd, prefix + body);
    } catch (error) {
      // A full disk: what got out is cut off again (see `appendFully`), so a caller that tries
      // again does not repeat lines; the file is let go either way and the next append checks
      // its last line before writing.
      throw fileWriteError("Could not append to", path, error);
    }
    file.whole = true;
    return bytes;
  } catch (error) {
    release(path, file);
    throw error;
  }
}

/**
 * An append-only file this process keeps open (opening by path costs more than the append).
 * `whole`: its last line is known to be whole, so the next append skips the torn-line check.
 */
interface OpenFile {
  fd: number;
  whole: boolean;
  /** The `stretch` in which it was last found still at its path (see `markChecked`). */
  checked: number;
  /** Closed already: its descriptor number may belong to another file now. */
  closed: boolean;
  /** When it was last used (a counter): the least recently used go first when too many are open. */
  used: number;
}

/**
 * The open files, bounded under the file-descriptor limit (the orchestrator closes an idle
 * thread's files). Recency is a stamp on each entry, cheaper than reordering the map per append.
 */
const openFiles = new Map<string, OpenFile>();
let clock = 0;
let maxOpen = appendFileBound(openFilesLimit(readProcessLimits()));

/**
 * How many append files to keep open (descriptor-budget.ts): half the open-files limit. `limits`
 * is the text of /proc/self/limits.
 */
export function openFileBound(limits: string | undefined): number {
  return appendFileBound(openFilesLimit(limits));
}

/** Tests: a small bound, to exercise eviction without thousands of files. Returns the old one. */
export function setOpenFileBound(bound: number): number {
  const old = maxOpen;
  maxOpen = bound;
  return old;
}

function openForAppend(path: string): OpenFile {
  const cached = openFiles.get(path);
  if (cached) {
    // Still the file at `path`? One that was removed or replaced by a rename has no links left:
    // appends to it would go nowhere, so open the path again.
    if (cached.checked === stretch || fstatSync(cached.fd).nlink > 0) {
      markChecked(cached);
      cached.used = ++clock;
      return cached;
    }
    release(path, cached);
  }
  let fd: number;
  try {
    fd = openSync(path, "a+");
  } catch (error) {
    // Out of descriptors: the least recently used append files give theirs back, once.
    if (!isDescriptorShortage(error) || !closeLeastUsed()) throw error;
    fd = openSync(path, "a+");
  }
  const file = openFile(fd, true);
  remember(path, file);
  return file;
}

/**
 * Numbers stretches of code that run without returning to the event loop: a stretch ends when
 * the microtask queued at its first check runs. A file found still at its path in the current
 * stretch is not asked again in it: this process renames or removes these files only after
 * `forgetAppendState`, and a rename or removal by another process meanwhile is no different
 * from one just after the append (which no check can catch). A run's start reads the log's size
 * and logs the prompt in one stretch: one fstat instead of two.
 */
let stretch = 0;
let stretchEnds = false;
const nextStretch = () => {
  stretch++;
  stretchEnds = false;
};
function markChecked(file: OpenFile): void {
  file.checked = stretch;
  if (!stretchEnds) {
    stretchEnds = true;
    queueMicrotask(nextStretch);
  }
}

/** `openedNow`: opened by path in this stretch, so it is the file there. */
const openFile = (fd: number, openedNow: boolean): OpenFile => {
  const file = { fd, whole: false, checked: -1, closed: false, used: ++clock };
  if (openedNow) markChecked(file);
  return file;
};

/**
 * Adds an open file. At the bound, the least recently used quarter is closed first (at least
 * one): a sort now and then rather than upkeep of an order on every append.
 */
function remember(path: string, file: OpenFile): void {
  if (openFiles.size >= maxOpen) closeLeastUsed(openFiles.size - maxOpen + 1);
  openFiles.set(path, file);
}

/**
 * Closes the least recently used quarter of the open append files (at least `atLeast`, at least
 * one); false when none was open. Also what an open that met EMFILE does before it tries again.
 */
function closeLeastUsed(atLeast = 1): boolean {
  if (openFiles.size === 0) return false;
  const byUse = [...openFiles].sort((a, b) => a[1].used - b[1].used);
  for (const [oldest, entry] of byUse.slice(0, Math.max(atLeast, Math.floor(maxOpen / 4)))) {
    openFiles.delete(oldest);
    shut(entry);
  }
  return true;
}

/** Paths `openForAppendAsync` is opening, and how often they were forgotten meanwhile. */
const opening = new Map<string, { count: number; forgets: number }>();

/**
 * Opens `path` for appending off the event loop (created if missing; its directory must exist)
 * and keeps it with the files `appendLines` holds open, for the thread's next appends.
 */
export async function openForAppendAsync(path: string): Promise<void> {
  if (openFiles.has(path)) return;
  let pending = opening.get(path);
  if (pending === undefined) {
    pending = { count: 0, forgets: 0 };
    opening.set(path, pending);
  }
  pending.count++;
  const forgets = pending.forgets;
  let fd: number;
  try {
    // A thread that was accepted waits for descriptors rather than failing its run.
    fd = await retryOnDescriptorShortage(
      () =>
        new Promise<number>((resolve, reject) =>
          open(path, "a+", (error, fd) => (error ? reject(error) : resolve(fd))),
        ),
      { free: () => closeLeastUsed() },
    );
  } finally {
    if (--pending.count === 0) opening.delete(path);
  }
  // A synchronous append may have opened it meanwhile. Or the file was forgotten meanwhile
  // (archived by /new, rewritten, removed): this descriptor may be the old file's, and appends
  // through it would land there. The next append opens the path again.
  if (openFiles.has(path) || pending.forgets !== forgets) closeSync(fd);
  // Opened off the event loop a moment ago: its first append still checks it.
  else remember(path, openFile(fd, false));
}

/**
 * `mkdir -p` off the event loop. The parent usually exists (a new thread of a known channel), so
 * a plain mkdir comes first; the recursive one only when it is missing.
 */
export function makeDirectoryAsync(dir: string): Promise<void> {
  return new Promise((resolve, reject) =>
    mkdir(dir, (error) => {
      if (!error || error.code === "EEXIST") resolve();
      else if (error.code !== "ENOENT") reject(error);
      else mkdir(dir, { recursive: true }, (again) => (again ? reject(again) : resolve()));
    }),
  );
}

/**
 * The descriptor kept open for `path` (opened for append and read) and the file's size, if it is
 * open and still the file at the path: readers use it instead of opening the path again. Do not
 * close it.
 */
export function openAppendFd(path: string): { fd: number; size: number } | undefined {
  const cached = openFiles.get(path);
  if (!cached) return undefined;
  const stat = fstatSync(cached.fd);
  if (stat.nlink > 0) {
    markChecked(cached);
    return { fd: cached.fd, size: stat.size };
  }
  release(path, cached);
  return undefined;
}

function release(path: string, file: OpenFile): void {
  if (openFiles.get(path) === file) openFiles.delete(path);
  shut(file);
}

function shut(file: OpenFile): void {
  if (file.closed) return;
  file.closed = true;
  closeSync(file.fd);
}

/**
 * Forget what `appendLines` knows of a file that is about to be replaced, renamed,
 * truncated or removed by other means (and close it): the next append opens the path again and
 * checks its last line.
 */
export function forgetAppendState(path: string): void {
  const pending = opening.get(path);
  if (pending) pending.forgets++;
  const file = openFiles.get(path);
  if (file) release(path, file);
}

/** True when a file of `size` bytes does not end in a newline (a writer died mid-line). */
export function endsTorn(fd: number, size: number): boolean {
  if (size === 0) return false;
  const last = Buffer.alloc(1);
  readSync(fd, last, 0, 1, size - 1);
  return last[0] !== 0x0a;
}

/** fsyncs a directory, so a file created in it is there after a power cut. */
export function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch {
    // Some filesystems refuse fsync on a directory; the file itself is synced.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
