// Helper of bench/gateway (run with --expose-gc): heap bytes retained per idle, deactivated
// thread actor, measured in-process with the built @guppy/core and pi-ai's faux provider.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAgentRunner, createOrchestrator, createStore } from "@guppy/core";
import { fauxAssistantMessage, registerFauxProvider } from "@mariozechner/pi-ai";

const THREADS = Number(process.argv[2] ?? 5000);
const home = mkdtempSync(join(tmpdir(), "guppy-bench-idle-"));
const faux = registerFauxProvider({ models: [{ id: "faux", contextWindow: 100_000 }] });
faux.setResponses(Array.from({ length: THREADS * 2 + 10 }, () => fauxAssistantMessage("ok")));
const store = createStore({ home });
const orchestrator = createOrchestrator({
  store,
  maxConcurrent: 64,
  queueDepth: 5,
  idleTimeoutMs: 50,
  createRunner: (threadId) =>
    createAgentRunner({
      threadId,
      store,
      model: faux.getModel(),
      apiKey: "faux",
      systemPrompt: "bench",
      tools: [],
      maxToolRounds: 5,
      maxRetries: 0,
    }),
});
await orchestrator.start();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const settle = async () => {
  while (orchestrator.counters().loadedRunners > 0 || orchestrator.counters().runningNow > 0)
    await sleep(20);
  for (let i = 0; i < 4; i++) {
    globalThis.gc();
    await sleep(20);
  }
};
const wave = async (prefix) => {
  let answered = 0;
  await new Promise((resolve) => {
    for (let i = 0; i < THREADS; i++) {
      orchestrator.send(`bench:idle:${prefix}${i}`, {
        type: "prompt",
        text: "hi",
        thread: {
          threadId: `bench:idle:${prefix}${i}`,
          notice() {},
          onEvent(e) {
            if (e.type === "run_end" && ++answered === THREADS) resolve();
          },
        },
      });
    }
  });
};
await wave("warm"); // first wave: code paths warmed, heap grown
await settle();
const before = process.memoryUsage();
await wave("t");
await settle();
const after = process.memoryUsage();
console.log(
  JSON.stringify({
    threads: THREADS,
    heapPerThread: (after.heapUsed - before.heapUsed) / THREADS,
    rssPerThread: (after.rss - before.rss) / THREADS,
  }),
);
await orchestrator.shutdown(0);
faux.unregister();
rmSync(home, { recursive: true, force: true });
