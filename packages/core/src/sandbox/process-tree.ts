import { readdirSync, readFileSync } from "node:fs";
import { overwriteInPlace } from "../fs/write.js";
import type { Logger } from "../logging/logger.js";

/** Pids of every descendant of `pid` (Linux /proc walk; empty elsewhere). */
export function descendantPids(pid: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const children = new Map<number, number[]>();
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // Field 4 (ppid) follows the parenthesised command name, which may hold spaces.
      const after = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const ppid = Number(after[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      // process ended while we looked
    }
  }
  const out: number[] = [];
  const stack = [pid];
  while (stack.length > 0) {
    const current = stack.pop()!;
    for (const child of children.get(current) ?? []) {
      out.push(child);
      stack.push(child);
    }
  }
  return out;
}

/**
 * Pids of processes whose environment carries `tag` (NAME=value). A tag set in the environment
 * of a spawned command is inherited by everything it starts, even processes that left its
 * process group and were re-parented (setsid, double fork).
 */
export function taggedPids(tag: string): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const environ = readFileSync(`/proc/${entry}/environ`, "latin1");
      if (environ.split("\0").includes(tag)) out.push(Number(entry));
    } catch {
      // ended, or not ours to read
    }
  }
  return out;
}

/**
 * Kills a process started with `detached: true` together with its whole tree: the process group,
 * every descendant, and (given `tag`) every process that inherited the tag after escaping the
 * group. SIGTERM, then SIGKILL after `graceMs`; `then` runs after the SIGKILL.
 */
export function killProcessTree(
  pid: number,
  options: { graceMs?: number; tag?: string; then?: () => void } = {},
): void {
  const find = () => [pid, ...descendantPids(pid), ...(options.tag ? taggedPids(options.tag) : [])];
  const targets = find();
  signalAll(pid, targets, "SIGTERM");
  const timer = setTimeout(() => {
    signalAll(pid, [...new Set([...targets, ...find()])], "SIGKILL");
    options.then?.();
  }, options.graceMs ?? 500);
  timer.unref();
}

/**
 * Kills such a tree at once and synchronously (SIGKILL, no grace): for a process about to exit,
 * which cannot wait for a timer.
 */
export function killProcessTreeNow(pid: number, tag?: string): void {
  signalAll(pid, [pid, ...descendantPids(pid), ...(tag ? taggedPids(tag) : [])], "SIGKILL");
}

/**
 * Fields of `/proc/<pid>/stat` after the command name (which may hold spaces and parentheses):
 * [0] is field 3 (state). Undefined when the process is gone or there is no /proc.
 */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/**
 * When the process started (field 22 of /proc/<pid>/stat, clock ticks since boot): with its pid,
 * it names one process — a pid reused by another process has another start time.
 */
export function processStartTime(pid: number): string | undefined {
  return statFields(pid)?.[19];
}

/** The process group of a process (field 5 of /proc/<pid>/stat). */
export function processGroup(pid: number): number | undefined {
  const group = Number(statFields(pid)?.[2]);
  return Number.isInteger(group) && group > 0 ? group : undefined;
}

function signalAll(groupLeader: number, pids: number[], signal: NodeJS.Signals): void {
  try {
    process.kill(-groupLeader, signal);
  } catch {
    // group already gone
  }
  for (const p of pids) {
    try {
      process.kill(p, signal);
    } catch {
      // already gone
    }
  }
}

/** `<home>/running-tools.jsonl`: where `guppy serve` records its running tool commands. */
export const RUNNING_TOOLS_FILE = "running-tools.jsonl";

/**
 * A command the sandbox runs now: the pid of the process started for it (its shell, or the
 * unshare or bwrap before it; the leader of its process group), when that process started (see `processStartTime`), and the tag (NAME=value) in the environment of
 * everything it starts.
 */
interface RunningTree {
  pid: number;
  start?: string;
  tag: string;
}

/** The commands running now, by pid. */
const running = new Map<number, RunningTree>();
/** Where they are recorded (`recordRunningTrees`), and who hears when that fails. */
let record: { path: string; onError: (error: unknown) => void } | undefined;

/** A command began: it is killed with the others by `killRunningTrees` (and recorded). */
export function trackTree(pid: number, tag: string): void {
  const start = processStartTime(pid);
  running.set(pid, start === undefined ? { pid, tag } : { pid, tag, start });
  save();
}

/** The command's tree is gone (or left alone on purpose): it is no longer killed or recorded. */
export function untrackTree(pid: number): void {
  if (running.delete(pid)) save();
}

/**
 * Kills the tree of every command running now, at once (SIGKILL): for a process that exits
 * immediately (a second SIGINT or SIGTERM), whose tool commands must not go on without it.
 * Returns how many there were.
 */
export function killRunningTrees(): number {
  const trees = [...running.values()];
  for (const tree of trees) killProcessTreeNow(tree.pid, tree.tag);
  running.clear();
  save();
  return trees.length;
}

/**
 * From now on, keeps the commands running in this process listed in the file at `path`, one JSON
 * line each, rewritten in place as they start and end (not fsync'd: it has to outlive this
 * process, not the machine, whose processes die with it). A process killed with SIGKILL cannot
 * kill its commands; the next one reads the list with `killLeftoverTrees`. `undefined` stops
 * recording. A failed write goes to `onError`: the commands run either way.
 */
export function recordRunningTrees(
  path: string | undefined,
  onError: (error: unknown) => void = () => {},
): void {
  record = path === undefined ? undefined : { path, onError };
  save();
}

function save(): void {
  if (record === undefined) return;
  const lines = [...running.values()].map((tree) => `${JSON.stringify(tree)}\n`).join("");
  try {
    overwriteInPlace(record.path, lines);
  } catch (error) {
    record.onError(error);
  }
}

/**
 * Kills what is left of the commands listed in `path` by an earlier process (see
 * `recordRunningTrees`) that died without killing them. Only what is still theirs: processes
 * whose environment carries a command's tag, and the command's shell with its process group and
 * descendants when a process with its pid and start time still runs (a pid reused by another
 * process has another start time). Returns how many commands had something left to kill.
 * Call it only while no other process records to `path` (guppy serve holds the inbox lock).
 */
export function killLeftoverTrees(path: string): number {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return 0;
  }
  let killed = 0;
  for (const line of text.split("\n")) {
    const tree = parseTree(line);
    if (tree === undefined) continue;
    const shellAlive = tree.start !== undefined && processStartTime(tree.pid) === tree.start;
    const tagged = taggedPids(tree.tag);
    const targets = new Set(tagged);
    const groups = new Set<number>();
    if (shellAlive) {
      targets.add(tree.pid);
      for (const pid of descendantPids(tree.pid)) targets.add(pid);
      groups.add(tree.pid);
    }
    // A process of the command still in its group: the rest of the group is the command's too.
    for (const pid of tagged) if (processGroup(pid) === tree.pid) groups.add(tree.pid);
    if (targets.size === 0) continue;
    killed++;
    for (const group of groups) signal(-group);
    for (const pid of targets) signal(pid);
  }
  return killed;
}

function signal(target: number): void {
  try {
    process.kill(target, "SIGKILL");
  } catch {
    // already gone
  }
}

function parseTree(line: string): RunningTree | undefined {
  if (line.trim() === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined; // a line cut short by a crash mid-rewrite
  }
  if (value === null || typeof value !== "object") return undefined;
  const { pid, start, tag } = value as Record<string, unknown>;
  if (typeof pid !== "number" || !Number.isInteger(pid) || pid <= 1) return undefined;
  // Only tags this sandbox gives: a hand-edited line must not name every process (an empty tag).
  if (typeof tag !== "string" || !/^GUPPY_EXEC_TAG=[0-9a-f-]{36}$/.test(tag)) return undefined;
  return typeof start === "string" ? { pid, tag, start } : { pid, tag };
}

/**
 * Takes the list at `path` over as its one writer (the caller holds the lock that makes it so):
 * kills what `who`, killed earlier, left running, then records this process's commands there.
 */
export function takeOverRunningTrees(path: string, logger: Pick<Logger, "warn">, who: string) {
  const leftovers = killLeftoverTrees(path);
  if (leftovers > 0) {
    logger.warn(`Killed ${leftovers} tool command(s) left running by ${who} that was killed`);
  }
  recordRunningTrees(path, (error) =>
    logger.warn(`Could not record the running tool commands in ${path}`, { error: String(error) }),
  );
}
