import { readdirSync, readFileSync } from "node:fs";

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
