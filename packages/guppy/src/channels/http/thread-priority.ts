import { readlinkSync } from "node:fs";
import { getPriority, setPriority } from "node:os";

/**
 * How many nice levels the HTTP API's worker thread gives way to the agents' thread. When the
 * cores are all busy (a small VPS under load), the agents' thread — which runs every prompt's
 * intake, runs and answers in turn — gets the CPU first, and the HTTP thread waits its turn a
 * little longer. With a core to spare, nothing changes.
 */
export const HTTP_THREAD_NICENESS = 5;

/**
 * Lowers the calling thread's scheduling priority by `steps` nice levels (at most to 19) and
 * returns its new nice value. Linux only, where the nice value belongs to each thread and
 * /proc/thread-self names the caller; elsewhere (or when refused) it changes nothing and returns
 * undefined. Raising it back would need privileges: this only ever lowers. Threads the caller
 * starts afterwards inherit the new value: call it on a thread that starts none. (Node's
 * file-system pool belongs to the process and is started by the first thread that needs it: in
 * guppy serve the main thread, before the HTTP worker exists; test/serve checks it.)
 */
export function lowerThreadPriority(steps: number): number | undefined {
  let tid: number;
  try {
    tid = Number(readlinkSync("/proc/thread-self").split("/").pop());
  } catch {
    return undefined;
  }
  if (!Number.isInteger(tid) || tid <= 0) return undefined;
  try {
    const nice = Math.min(19, getPriority(tid) + steps);
    setPriority(tid, nice);
    return getPriority(tid);
  } catch {
    return undefined;
  }
}
