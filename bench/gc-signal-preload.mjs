// Helper of bench/gateway (`node --expose-gc --import ./bench/gc-signal-preload.mjs …`): on
// SIGUSR2 the gateway runs full garbage collections and appends one JSON line
// `{"rss":…,"heapUsed":…,"heapTotal":…,"external":…,"arrayBuffers":…}` (bytes) to the file named by BENCH_GC_REPORT — what it holds once
// the garbage of the load is gone, the memory its idle threads really retain.
import { appendFileSync } from "node:fs";

const report = process.env.BENCH_GC_REPORT;
if (typeof globalThis.gc !== "function" || !report) {
  throw new Error("gc-signal-preload needs node --expose-gc and BENCH_GC_REPORT");
}
process.on("SIGUSR2", () => {
  // Collections a little apart: finalizers and weak callbacks run in between, and what they
  // free goes in the next one.
  let left = 3;
  const collect = () => {
    globalThis.gc();
    if (--left > 0) setTimeout(collect, 50);
    else {
      const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
      // The HTTP API worker's heap (its own isolate, which these GCs do not reach), from the
      // diagnostic report.
      const workers = process.report.getReport().workers ?? [];
      const workerHeapTotal = workers.reduce((n, w) => n + (w.javascriptHeap?.totalMemory ?? 0), 0);
      const workerHeapUsed = workers.reduce((n, w) => n + (w.javascriptHeap?.usedMemory ?? 0), 0);
      const line = {
        rss,
        heapUsed,
        heapTotal,
        external,
        arrayBuffers,
        workerHeapUsed,
        workerHeapTotal,
      };
      appendFileSync(report, `${JSON.stringify(line)}\n`);
    }
  };
  collect();
});
