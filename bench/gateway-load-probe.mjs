// Helper of bench/gateway: the orchestrator under load, in process — the gateway's own actors,
// durable inbox, store and thread runners (system prompt, tools, context engine), with pi-ai's
// faux provider answering every request after LATENCY_MS. No HTTP on either side, so the
// figure is the runtime's scheduling and bookkeeping cost, not the client's or the LLM's.
// Prints one JSON line. Args: threads messages concurrency latencyMs. GUPPY_HOME is made under
// BENCH_DIR when set (e.g. /dev/shm) and left for the caller to remove, else under the system
// temp dir and removed at the end (removing thousands of files slows file creation on some disks
// for a minute: a caller that measures more after this removes it last).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { constants, PerformanceObserver } from "node:perf_hooks";
import { createOrchestrator, createStore, createThreadRunner, loadConfig } from "@guppy/core";
import { fauxAssistantMessage, registerFauxProvider } from "@mariozechner/pi-ai";
import { summarizeLateness } from "./lateness.mjs";
import {
  mainThreadCpuMs,
  mainThreadMinorFaults,
  mainThreadRunQueueWaitMs,
} from "./machine-probes.mjs";

const [THREADS, MESSAGES, CONCURRENT, LATENCY_MS] = process.argv.slice(2).map(Number);
const home = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), "guppy-bench-load-"));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const faux = registerFauxProvider({ models: [{ id: "faux", contextWindow: 128_000 }] });
/** How late each answer of the measured pass was taken (see lateness.mjs), in ms. */
let late;
const answer = async () => {
  const armed = performance.now();
  await sleep(LATENCY_MS);
  late?.push(performance.now() - armed - LATENCY_MS);
  return fauxAssistantMessage("ok");
};
faux.setResponses(Array.from({ length: 2 * THREADS * MESSAGES + 200 }, () => answer));
const config = loadConfig({ env: { GUPPY_HOME: home, GUPPY_MAX_CONCURRENT: String(CONCURRENT) } });
const resolved = {
  ref: "faux/faux",
  model: faux.getModel(),
  apiKey: "faux",
  maxTokens: 1024,
  custom: true,
};
const store = createStore({ home });
const orchestrator = createOrchestrator({
  store,
  maxConcurrent: CONCURRENT,
  queueDepth: config.queueDepth,
  idleTimeoutMs: config.idleTimeoutSeconds * 1000,
  createRunner: (threadId) => createThreadRunner({ threadId, config, resolved, store }),
});
await orchestrator.start();

/** One prompt through the front door; resolves with the answer's text. */
const ask = (threadId, text) =>
  new Promise((resolve) => {
    const result = orchestrator.send(threadId, {
      type: "prompt",
      text,
      deferSync: true, // as the HTTP API does: the answer is the acknowledgement
      thread: {
        threadId,
        notice: (t) => resolve(`notice: ${t}`),
        onEvent: (e) => {
          if (e.type === "run_end") resolve(e.text);
        },
      },
    });
    if (result.status !== "queued") resolve(`not queued: ${result.status}`);
  });

const load = async (prefix) => {
  const t0 = performance.now();
  const answers = await Promise.all(
    Array.from({ length: THREADS }, async (_, t) => {
      let ok = 0;
      for (let m = 0; m < MESSAGES; m++)
        if ((await ask(`bench:load:${prefix}${t}`, `message ${m}`)) === "ok") ok++;
      return ok;
    }),
  );
  return { wall: performance.now() - t0, answered: answers.reduce((a, b) => a + b, 0) };
};
await load("warm"); // JIT and file-system caches; not reported
// The measured pass's GC pauses of this thread: scavenges (young generation) and the others.
const gcPauses = { scavenge: 0, other: 0 };
const gcPauseMs = { scavenge: 0, other: 0 };
const gcObserver = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR ? "scavenge" : "other";
    gcPauses[kind]++;
    gcPauseMs[kind] += entry.duration;
  }
});
gcObserver.observe({ entryTypes: ["gc"] });
const cpu0 = mainThreadCpuMs(process.pid);
const wait0 = mainThreadRunQueueWaitMs(process.pid);
const faults0 = mainThreadMinorFaults(process.pid);
late = [];
const { wall, answered } = await load("t");
const lateness = summarizeLateness(late);
late = undefined;
// Read together, right after the pass (before the wait for the last GC entries below).
const cpuMs = mainThreadCpuMs(process.pid) - cpu0;
const waitMs = mainThreadRunQueueWaitMs(process.pid) - wait0;
const faults = mainThreadMinorFaults(process.pid) - faults0;
await new Promise((resolve) => setImmediate(resolve)); // the last GC entries are delivered
gcObserver.disconnect();
const ideal = (THREADS * MESSAGES * LATENCY_MS) / CONCURRENT;
console.log(
  JSON.stringify({
    answered,
    total: THREADS * MESSAGES,
    wall,
    ideal,
    ratio: wall / ideal,
    // µs of this (the agents') thread per prompt, ms it waited runnable for a CPU and its page
    // faults per prompt, from /proc: NaN (printed as null) without it
    cpuPerPromptUs: (cpuMs * 1000) / (THREADS * MESSAGES),
    runQueueWaitMs: waitMs,
    gcPauses,
    gcPauseMs,
    faultsPerPrompt: faults / (THREADS * MESSAGES),
    lateness,
  }),
);
await orchestrator.shutdown(0);
faux.unregister();
if (process.env.BENCH_DIR === undefined) rmSync(home, { recursive: true, force: true });
