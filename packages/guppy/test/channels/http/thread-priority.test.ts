import { readFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";

/** The built module (npm test builds before it runs the tests): a worker thread imports it. */
const moduleUrl = pathToFileURL(
  fileURLToPath(new URL("../../../dist/channels/http/thread-priority.js", import.meta.url)),
).href;

/** A thread's nice value, from /proc/<pid>/task/<tid>/stat (field 19). */
const niceOf = (tid: number) =>
  Number(
    readFileSync(`/proc/${process.pid}/task/${tid}/stat`, "utf8").split(") ")[1]?.split(" ")[16],
  );

interface Seen {
  tid: number;
  before: number;
  returned: number | undefined;
  after: number;
}

/** Runs lowerThreadPriority(steps) on a new worker thread; what its thread saw, and returned. */
function lowerOnWorker(steps: number): Promise<Seen> {
  const code = `
    const { parentPort } = require("node:worker_threads");
    const { readFileSync, readlinkSync } = require("node:fs");
    const nice = () => Number(readFileSync("/proc/thread-self/stat", "utf8").split(") ")[1].split(" ")[16]);
    const tid = Number(readlinkSync("/proc/thread-self").split("/").pop());
    import(${JSON.stringify(moduleUrl)}).then((m) => {
      const before = nice();
      const returned = m.lowerThreadPriority(${steps});
      parentPort.postMessage({ tid, before, returned, after: nice() });
    });`;
  const worker = new Worker(code, { eval: true });
  return new Promise((resolve, reject) => {
    worker.once("message", (seen: Seen) => {
      resolve(seen);
      void worker.terminate();
    });
    worker.once("error", reject);
  });
}

describe.skipIf(process.platform !== "linux")("lowerThreadPriority", () => {
  it("lowers the calling thread only, by the steps asked, and says to what", async () => {
    const main = niceOf(process.pid);
    const seen = await lowerOnWorker(3);
    expect(seen.tid).not.toBe(process.pid);
    expect(seen.before).toBe(main);
    expect(seen.after).toBe(Math.min(19, main + 3));
    expect(seen.returned).toBe(seen.after);
    expect(niceOf(process.pid)).toBe(main);
  });

  it("stops at 19, the lowest priority there is", async () => {
    const seen = await lowerOnWorker(40);
    expect(seen.after).toBe(19);
    expect(seen.returned).toBe(19);
  });
});
