// bench/memory: what `guppy serve` keeps after a load (issue 33, item 9: "after a load of 15,000
// messages and idle unload, RSS settled at ~300 MB from 81 MB"; target within 1.5× idle).
//  - idle: RSS 10 s after start, then after full GCs (gc-signal-preload.mjs, SIGUSR2);
//  - load: BENCH_MEMORY_THREADS threads (default 3,000) × 5 chat completions through the HTTP API,
//    200 clients at once, a faux OpenAI-compatible LLM in this process answering in 20 ms,
//    GUPPY_MAX_CONCURRENT=64; RSS at its end;
//  - after idle unload (GUPPY_IDLE_TIMEOUT_SECONDS=2, waited 5 s) and full GCs, and again 30 s
//    later: RSS, the main thread's heap (used, total), external and array buffers, and the
//    ratio to the idle figure.
// BENCH_MEMORY_ROUNDS (default 2) gateways in turn; BENCH_MEMORY_ENV adds environment (as
// `MALLOC_ARENA_MAX=2`) to the gateway. Needs a build (npm run build). Prints figures; never
// fails on them.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createHttpLoadClient } from "./http-load-client.mjs";

const bin = fileURLToPath(new URL("../packages/guppy/bin/guppy.js", import.meta.url));
const gcPreload = fileURLToPath(new URL("./gc-signal-preload.mjs", import.meta.url));
const THREADS = Number(process.env.BENCH_MEMORY_THREADS ?? 3000);
const MESSAGES = 5;
const CLIENTS = 200;
const ROUNDS = Math.max(1, Number(process.env.BENCH_MEMORY_ROUNDS ?? 2));
const EXTRA_ENV = Object.fromEntries(
  (process.env.BENCH_MEMORY_ENV ?? "")
    .split(/\s+/)
    .filter(Boolean)
    .map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]),
);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const MB = 2 ** 20;
const rssMb = (pid) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : Number.NaN;
};

// A faux OpenAI-compatible LLM: every chat completion streams "ok <n>" after 20 ms.
let llmRequests = 0;
const llm = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    const n = ++llmRequests;
    setTimeout(() => {
      const chunk = (delta, finish, usage) =>
        `data: ${JSON.stringify({
          id: `c${n}`,
          object: "chat.completion.chunk",
          created: 0,
          model: "faux",
          choices: [{ index: 0, delta, finish_reason: finish }],
          ...(usage ? { usage } : {}),
        })}\n\n`;
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(
        chunk({ role: "assistant", content: `ok ${n}` }, null) +
          chunk({}, "stop", { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 }) +
          "data: [DONE]\n\n",
      );
    }, 20);
  });
});
await new Promise((r) => llm.listen(0, "127.0.0.1", r));
const llmUrl = `http://127.0.0.1:${llm.address().port}/v1`;

const freePort = async () => {
  const s = createServer();
  await new Promise((r) => s.listen(0, "127.0.0.1", r));
  const port = s.address().port;
  await new Promise((r) => s.close(r));
  return port;
};

async function startServe(home, gcReport) {
  const port = await freePort();
  const child = spawn(process.execPath, ["--expose-gc", "--import", gcPreload, bin, "serve"], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      GUPPY_HOME: home,
      GUPPY_MODEL: "openai/faux",
      GUPPY_BASE_URL: llmUrl,
      GUPPY_API: "openai-completions",
      GUPPY_API_KEY: "bench",
      GUPPY_MAX_RETRIES: "0",
      GUPPY_HTTP_PORT: String(port),
      GUPPY_SANDBOX: "host",
      GUPPY_MAX_CONCURRENT: "64",
      GUPPY_IDLE_TIMEOUT_SECONDS: "2",
      BENCH_GC_REPORT: gcReport,
      ...EXTRA_ENV,
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const t0 = performance.now();
  for (;;) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health`)).ok) break;
    } catch {
      // not listening yet
    }
    if (performance.now() - t0 > 20_000) throw new Error("guppy serve did not start");
    await sleep(20);
  }
  const token = readFileSync(join(home, "api-token"), "utf8").trim();
  const afterGc = async () => {
    const lines = () =>
      (existsSync(gcReport) ? readFileSync(gcReport, "utf8") : "").split("\n").slice(0, -1);
    const seen = lines().length;
    child.kill("SIGUSR2");
    for (;;) {
      await sleep(50);
      const now = lines();
      if (now.length > seen) return JSON.parse(now[now.length - 1]);
    }
  };
  const stop = async () => {
    const exited = new Promise((r) => child.on("exit", r));
    child.kill("SIGTERM");
    await exited;
  };
  return { child, port, token, afterGc, stop };
}

const describe = (m) =>
  `RSS ${(m.rss / MB).toFixed(0)} MB (heap ${(m.heapUsed / MB).toFixed(0)}/${(m.heapTotal / MB).toFixed(0)} MB, HTTP worker's heap ${(m.workerHeapUsed / MB).toFixed(0)}/${(m.workerHeapTotal / MB).toFixed(0)} MB, external ${(m.external / MB).toFixed(0)} MB)`;

/**
 * Where the RSS is (BENCH_MEMORY_SMAPS=1), in MB by kind of mapping: `brk` (the main thread's
 * malloc arena), `arenas` (anonymous read-write mappings at a 64 MB boundary: other threads'
 * malloc arenas, reserved 64 MB at a time), `anon` (other anonymous memory: V8's heaps and code,
 * mostly), `file` (the node binary and libraries' pages).
 */
function smapsSummary(pid) {
  const M64 = 64n * 1024n * 1024n;
  const kinds = { brk: 0, arenas: 0, anon: 0, file: 0 };
  let kind;
  for (const line of readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
    const head = /^([0-9a-f]+)-[0-9a-f]+ (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      const name = head[3] ?? "";
      kind =
        name === "[heap]"
          ? "brk"
          : name.startsWith("/")
            ? "file"
            : name
              ? undefined
              : BigInt(`0x${head[1]}`) % M64 === 0n && head[2].startsWith("rw")
                ? "arenas"
                : "anon";
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss && kind) kinds[kind] += Number(rss[1]);
  }
  return Object.entries(kinds)
    .map(([k, v]) => `${k} ${(v / 1024).toFixed(0)}`)
    .join(", ");
}

const homes = [];
try {
  for (let round = 1; round <= ROUNDS; round++) {
    const home = mkdtempSync(join(tmpdir(), "guppy-bench-memory-"));
    homes.push(home);
    const s = await startServe(home, join(home, "gc.jsonl"));
    try {
      await sleep(10_000);
      const idleRss = rssMb(s.child.pid);
      const idle = await s.afterGc();
      const smaps = process.env.BENCH_MEMORY_SMAPS ? smapsSummary(s.child.pid) : undefined;
      const client = createHttpLoadClient(s.port);
      const failures = new Map();
      const ask = async (thread, text, user) => {
        const { status, body } = await client.post(
          user,
          "/v1/chat/completions",
          {
            authorization: `Bearer ${s.token}`,
            "content-type": "application/json",
            "x-guppy-thread": thread,
          },
          JSON.stringify({ model: "faux", messages: [{ role: "user", content: text }] }),
        );
        if (status !== 200) failures.set(status, body.slice(0, 200));
        return status === 200;
      };
      const t0 = performance.now();
      let answered = 0;
      await Promise.all(
        Array.from({ length: CLIENTS }, async (_, c) => {
          for (let t = c; t < THREADS; t += CLIENTS) {
            for (let m = 0; m < MESSAGES; m++)
              if (await ask(`t${t}`, `message ${m}`, `u${c}`)) answered++;
          }
        }),
      );
      const wall = performance.now() - t0;
      const loadedRss = rssMb(s.child.pid);
      client.close();
      // As it runs: no forced GC, 5 s after the load (every thread unloaded) and 30 s later.
      await sleep(5000);
      const unloadedRss = rssMb(s.child.pid);
      await sleep(30_000);
      const settledRss = rssMb(s.child.pid);
      const unloaded = await s.afterGc();
      await sleep(30_000);
      const settled = await s.afterGc();
      const ratio = (x) => (x.rss / idle.rss).toFixed(2);
      console.log(
        `run ${round}/${ROUNDS}: idle RSS after 10 s ${idleRss.toFixed(0)} MB; after GC ${describe(idle)}`,
      );
      console.log(
        `  load ${answered}/${THREADS * MESSAGES} answered in ${(wall / 1000).toFixed(1)} s; RSS at its end ${loadedRss.toFixed(0)} MB`,
      );
      console.log(
        `  as it runs, no forced GC: ${unloadedRss.toFixed(0)} MB 5 s after the load, ${settledRss.toFixed(0)} MB 30 s later = ${(settledRss / idleRss).toFixed(2)}× idle`,
      );
      console.log(`  then after full GCs      ${describe(unloaded)} = ${ratio(unloaded)}× idle`);
      console.log(
        `  30 s later, after GC    ${describe(settled)} = ${ratio(settled)}× idle (target ≤ 1.5×)`,
      );
      if (failures.size > 0) console.log(`  not answered 200: ${JSON.stringify([...failures])}`);
      if (smaps)
        console.log(`  resident MB: idle ${smaps}; at the end ${smapsSummary(s.child.pid)}`);
    } finally {
      await s.stop();
    }
  }
} finally {
  llm.close();
  for (const h of homes) rmSync(h, { recursive: true, force: true });
}
