// Helper of bench/gateway: what the machine itself does to a load's figure, read from Linux's
// /proc (each returns NaN, or waits for nothing, where there is no /proc). On a small virtual
// machine the same code's wall time moves by tens of percent within minutes; these say how much
// of a run the machine took away from guppy — CPU time the agents' thread waited for, kernel
// work, a disk slowed by files removed just before — so runs can be compared for what they are.
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * The fields of a process's main thread's /proc stat line after its name (the first is its
 * state: `fields[n]` is field n + 3 of proc(5)), or undefined without /proc.
 */
function mainThreadStat(pid) {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  } catch {
    return undefined;
  }
}

/** CPU time (user + system) of a process's main thread so far, in ms; NaN without /proc. */
export function mainThreadCpuMs(pid) {
  const fields = mainThreadStat(pid);
  if (fields === undefined) return Number.NaN;
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks of 10 ms
}

/**
 * How long a process's main thread has waited so far, in ms, while it could run but every CPU was
 * busy with something else (its other threads, the load client, the kernel): schedstat's second
 * field. NaN without /proc (or a kernel without schedstats).
 */
export function mainThreadRunQueueWaitMs(pid) {
  try {
    const [, waitNs] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").split(" ");
    return Number(waitNs) / 1e6;
  } catch {
    return Number.NaN;
  }
}

/**
 * Minor page faults of a process's main thread so far (a page of memory touched for the first
 * time: V8's heap growing, a scavenge copying survivors into fresh pages); NaN without /proc.
 */
export function mainThreadMinorFaults(pid) {
  const fields = mainThreadStat(pid);
  return fields === undefined ? Number.NaN : Number(fields[7]);
}

/**
 * What one minor page fault costs this process now, in µs: the first touch of each page of 64 MB
 * just allocated, against a second touch. Commonly ~1 µs on bare metal (not measured here); on a
 * virtual machine whose guest traps to its host on every fault (a PVM guest, this project's
 * machines) 12–18 µs measured.
 */
export function pageFaultCostUs() {
  const size = 64 * 1024 * 1024;
  const page = 4096;
  const buf = Buffer.allocUnsafeSlow(size);
  const touch = (value) => {
    const t0 = performance.now();
    for (let i = 0; i < size; i += page) buf[i] = value;
    return performance.now() - t0;
  };
  const first = touch(1);
  const again = touch(2);
  return ((first - again) * 1000) / (size / page);
}

/** The machine's CPU time so far, all CPUs together: `{ total, kernel }` in ticks; NaN without /proc. */
export function machineCpuTicks() {
  try {
    const [user, nice, system, idle, iowait, irq, softirq, steal] = readFileSync(
      "/proc/stat",
      "utf8",
    )
      .split("\n", 1)[0]
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    return {
      total: user + nice + system + idle + iowait + irq + softirq + steal,
      kernel: system + irq + softirq,
    };
  } catch {
    return { total: Number.NaN, kernel: Number.NaN };
  }
}

/** The kernel's share (%) of all CPUs' time between two `machineCpuTicks()` readings. */
export function kernelShare(before, after) {
  return (100 * (after.kernel - before.kernel)) / (after.total - before.total);
}

/**
 * What creating a directory and a file in it costs in `dir` now, in ms per entry (a new thread
 * creates its directory, log.jsonl and context.jsonl). Leaves its entries in `dir`: removing them
 * here would slow the next creations (see `settleFileCreation`).
 */
export function creationCost(dir) {
  const probe = mkdtempSync(join(dir, "probe-"));
  const t0 = performance.now();
  for (let i = 0; i < 200; i++) {
    mkdirSync(join(probe, `p${i}`));
    closeSync(openSync(join(probe, `p${i}`, "f"), "a"));
  }
  return (performance.now() - t0) / 400;
}

/**
 * Creating a file costs at most this much on a quiet disk here (0.013–0.04 ms measured). 0.06 ms,
 * the bound before, let loads start while the disk still paid for a clean-up: after removing a
 * fresh clone's node_modules, rounds that started at 0.046–0.06 ms ran at 1.41–1.44× ideal with
 * the kernel at 24 % of all CPU time, rounds started at 0.018–0.020 ms at 1.26–1.32× (kernel
 * 15–18 %), the same as on tmpfs.
 */
const SETTLED_MS = 0.04;

/**
 * Waits, up to `maxSeconds`, for creating a file in `dir` to cost what it does on a quiet disk.
 * On an ext4 without a journal (this project's virtual machines) the inode allocator skips every
 * inode removed in the last minute — five while its inode-table block is not yet written back —
 * checking each: after a test suite or an earlier bench run removed thousands of files, creating
 * one costs 3–8× more for about a minute (measured here), and every new thread creates three.
 * Without the wait, a load measures the previous run's clean-up. Returns the costs measured (ms,
 * first to last) and the seconds waited.
 */
export async function settleFileCreation(dir, maxSeconds) {
  const t0 = performance.now();
  const costs = [creationCost(dir)];
  while (costs[costs.length - 1] > SETTLED_MS && performance.now() - t0 < maxSeconds * 1000) {
    await sleep(10_000);
    costs.push(creationCost(dir));
  }
  return { costs, waited: (performance.now() - t0) / 1000 };
}
