import { readdirSync, readFileSync } from "node:fs";

/** True if `pid` runs. A zombie (exited, not yet reaped — common in containers whose pid 1 does not reap) counts as dead. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return true;
  }
}

/** Waits up to `ms` for `pid` to die; true if it did. */
export async function waitDead(pid: number, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (!isAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !isAlive(pid);
}

/**
 * Host pids of the live processes whose command line (arguments joined by spaces) holds
 * `marker`, or with `whole` is it. A command in a PID namespace of its own (the host sandbox's
 * `unshare`, bubblewrap) sees other pids than the host: it cannot hand its pids back, so tests
 * find its processes by a unique word in their arguments.
 */
export function pidsWith(marker: string, options: { whole?: boolean } = {}): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0$/, "");
      const line = cmdline.split("\0").join(" ");
      const match = options.whole ? line === marker : line.includes(marker);
      if (match && isAlive(Number(entry))) out.push(Number(entry));
    } catch {
      // ended while we looked
    }
  }
  return out;
}

/**
 * Waits up to `ms` until a process runs for each of `commandLines` (a whole command line, such
 * as `sleep 30.<marker>`: not the shell whose script names it); their pids.
 */
export async function waitRunning(commandLines: readonly string[], ms = 10_000): Promise<number[]> {
  const end = Date.now() + ms;
  for (;;) {
    const found = commandLines.map((line) => pidsWith(line, { whole: true }));
    if (found.every((pids) => pids.length > 0)) return [...new Set(found.flat())];
    if (Date.now() > end) throw new Error(`no process running ${commandLines.join(", ")}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Waits up to `ms` until no process's command line holds `marker`; true if none is left. */
export async function waitNoneWith(marker: string, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (pidsWith(marker).length === 0) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return pidsWith(marker).length === 0;
}

/** A word no other process's arguments hold, to find a test's processes by (see `pidsWith`). */
export function uniqueMarker(): string {
  return `${Date.now() % 100_000}${Math.floor(Math.random() * 1e6)}`;
}
