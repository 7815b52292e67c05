// bench/gateway: `guppy serve` with the HTTP API only.
//  - start → GET /health answering (target ≤ 700 ms), idle RSS after 10 s (target ≤ 90 MB)
//  - load against a faux OpenAI-compatible LLM answering in 20 ms: 1,000 threads × 5 messages,
//    GUPPY_MAX_CONCURRENT=64; all answered; wall time vs the ideal 5,000 × 20 ms / 64 (target ≤ 1.3×)
//    (a) through HTTP, the openai-compatible route, with a faux OpenAI server in this process, and
//    (b) in process (bench/gateway-load-probe.mjs): the same orchestrator, inbox, store and thread
//        runners with pi-ai's faux provider — the runtime's own cost without two HTTP hops
//    (b) is run with GUPPY_HOME on this disk and on tmpfs, which separates the runtime's cost from
//        the disk's (file creation is slow on some virtual disks)
//  - the file-system floor: the appends and reads one prompt needs, timed alone on this machine
//  - RSS per idle deactivated thread (target ≤ 5 KB): through HTTP, RSS growth over 4,000 more
//    one-message threads once all are deactivated, divided by 4,000 (RSS moves in allocator-sized
//    steps, so this is coarse); in process after GC (bench/idle-threads-probe.mjs), heap and RSS
// Needs a build (npm run build). Prints figures; never fails on a timing.
import { execFileSync, spawn } from "node:child_process";
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeSync,
} from "node:fs";
import { Agent, createServer, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const bin = fileURLToPath(new URL("../packages/guppy/bin/guppy.js", import.meta.url));
const LATENCY_MS = 20;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rssMb = (pid) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : Number.NaN;
};

// A faux OpenAI-compatible LLM: every chat completion streams "ok <n>" after LATENCY_MS.
let llmRequests = 0;
const llm = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    llmRequests++;
    setTimeout(() => {
      const id = `c${llmRequests}`;
      const chunk = (delta, finish, usage) =>
        `data: ${JSON.stringify({
          id,
          object: "chat.completion.chunk",
          created: 0,
          model: "faux",
          choices: [{ index: 0, delta, finish_reason: finish }],
          ...(usage ? { usage } : {}),
        })}\n\n`;
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(
        chunk({ role: "assistant", content: `ok ${llmRequests}` }, null) +
          chunk({}, "stop", { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 }) +
          "data: [DONE]\n\n",
      );
    }, LATENCY_MS);
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

async function startServe(home, extra = {}) {
  const port = await freePort();
  const t0 = performance.now();
  const child = spawn(process.execPath, [bin, "serve"], {
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
      ...extra,
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    try {
      const r = await fetch(`${url}/health`);
      if (r.ok) break;
    } catch {
      // not listening yet
    }
    if (performance.now() - t0 > 20_000) throw new Error("guppy serve did not start");
    await sleep(2);
  }
  const ready = performance.now() - t0;
  const token = readFileSync(join(home, "api-token"), "utf8").trim();
  const stop = async () => {
    const exited = new Promise((r) => child.on("exit", r));
    child.kill("SIGTERM");
    await exited;
  };
  return { child, url, token, ready, stop };
}

/**
 * The file work one prompt needs at least (inbox accepted and done, the log's two lines, the
 * context's append, one read of the log's new lines) over 1,000 new threads × 5 prompts, timed
 * alone: what this machine's disk makes the floor. Also what creating one file costs here (each
 * new thread creates its directory, inbox.jsonl, log.jsonl and context.jsonl).
 */
function fileFloor(home) {
  const line = '{"role":"user","content":"message"}\n';
  const t0 = performance.now();
  for (let m = 0; m < 5; m++) {
    for (let t = 0; t < 1000; t++) {
      const dir = join(home, `t${t}`);
      if (m === 0) mkdirSync(dir);
      for (const f of ["inbox", "log", "context", "log", "inbox"]) {
        const fd = openSync(join(dir, f), "a");
        writeSync(fd, line);
        closeSync(fd);
      }
      readFileSync(join(dir, "log"), "utf8");
    }
  }
  const perPrompt = (performance.now() - t0) / 5000;
  const c0 = performance.now();
  for (let i = 0; i < 500; i++) closeSync(openSync(join(home, `t${i}`, "new"), "a"));
  return { perPrompt, perCreate: (performance.now() - c0) / 500 };
}

const homes = [];
const newHome = () => {
  const h = mkdtempSync(join(tmpdir(), "guppy-bench-gateway-"));
  homes.push(h);
  return h;
};

try {
  // 1. Start → /health, and idle RSS.
  const readies = [];
  for (let i = 0; i < 5; i++) {
    const s = await startServe(newHome());
    readies.push(s.ready);
    if (i < 4) await s.stop();
    else {
      await sleep(10_000);
      console.log(
        `start → GET /health  median ${median(readies).toFixed(0)} ms over 5 starts (target ≤ 700 ms)`,
      );
      console.log(`idle RSS after 10 s  ${rssMb(s.child.pid).toFixed(1)} MB (target ≤ 90 MB)`);
      await s.stop();
    }
  }

  // 2. Load: 1,000 threads × 5 messages, each thread sending its next message after the answer.
  const THREADS = 1000;
  const MESSAGES = 5;
  const CONCURRENT = 64;
  const s = await startServe(newHome(), {
    GUPPY_MAX_CONCURRENT: String(CONCURRENT),
    GUPPY_IDLE_TIMEOUT_SECONDS: "2",
  });
  // node:http with a keep-alive agent rather than fetch: undici's fetch costs this process about
  // twice the CPU per request, and on a 2-core machine the client competes with the gateway.
  const agent = new Agent({ keepAlive: true });
  const ask = (thread, text) =>
    new Promise((resolve, reject) => {
      const body = JSON.stringify({ model: "faux", messages: [{ role: "user", content: text }] });
      const req = request(
        `${s.url}/v1/chat/completions`,
        {
          method: "POST",
          agent,
          headers: {
            authorization: `Bearer ${s.token}`,
            "content-type": "application/json",
            "content-length": Buffer.byteLength(body),
            "x-guppy-thread": thread,
          },
        },
        (res) => {
          let data = "";
          res.setEncoding("utf8");
          res.on("data", (chunk) => {
            data += chunk;
          });
          res.on("end", () => {
            try {
              const answer = JSON.parse(data).choices?.[0]?.message?.content;
              resolve(res.statusCode === 200 && typeof answer === "string");
            } catch {
              resolve(false);
            }
          });
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  // Warm-up (JIT, first connections), not timed.
  await Promise.all(Array.from({ length: 64 }, (_, i) => ask(`warm${i}`, "warm up")));
  const t0 = performance.now();
  const results = await Promise.all(
    Array.from({ length: THREADS }, async (_, t) => {
      let ok = 0;
      for (let m = 0; m < MESSAGES; m++) if (await ask(`t${t}`, `message ${m}`)) ok++;
      return ok;
    }),
  );
  const wall = performance.now() - t0;
  const answered = results.reduce((a, b) => a + b, 0);
  const ideal = (THREADS * MESSAGES * LATENCY_MS) / CONCURRENT;
  console.log(
    `load                 ${answered}/${THREADS * MESSAGES} answered; wall ${wall.toFixed(0)} ms vs ideal ${ideal.toFixed(0)} ms = ${(wall / ideal).toFixed(2)}× (target ≤ 1.3×)`,
  );
  console.log(
    `                     ${((THREADS * MESSAGES) / (wall / 1000)).toFixed(0)} prompts/s, RSS after load ${rssMb(s.child.pid).toFixed(1)} MB`,
  );

  // 2b. The same load in process — GUPPY_HOME on this disk, and on tmpfs when there is one — and
  // what the file system alone costs.
  const probe = fileURLToPath(new URL("./gateway-load-probe.mjs", import.meta.url));
  const inProcess = (dir) =>
    JSON.parse(
      execFileSync(process.execPath, [probe, "1000", "5", String(CONCURRENT), String(LATENCY_MS)], {
        encoding: "utf8",
        env: { ...process.env, ...(dir ? { BENCH_DIR: dir } : {}) },
      }),
    );
  const onDisk = inProcess(undefined);
  console.log(
    `load in process      ${onDisk.answered}/${onDisk.total} answered; wall ${onDisk.wall.toFixed(0)} ms = ${onDisk.ratio.toFixed(2)}× ideal (target ≤ 1.3×), GUPPY_HOME in ${tmpdir()}`,
  );
  if (existsSync("/dev/shm")) {
    const onTmpfs = inProcess("/dev/shm");
    console.log(
      `                     ${onTmpfs.answered}/${onTmpfs.total} answered; wall ${onTmpfs.wall.toFixed(0)} ms = ${onTmpfs.ratio.toFixed(2)}× ideal, GUPPY_HOME on tmpfs (/dev/shm): the runtime without the disk`,
    );
  }
  const floor = fileFloor(newHome());
  console.log(
    `file-system floor    ${floor.perPrompt.toFixed(3)} ms per prompt for its appends and read alone = ${((floor.perPrompt * THREADS * MESSAGES) / ideal).toFixed(2)}× ideal on one thread; creating a file ${floor.perCreate.toFixed(3)} ms`,
  );

  // 3. RSS per idle deactivated thread.
  await sleep(3500);
  const before = rssMb(s.child.pid);
  const EXTRA = 4000;
  await Promise.all(
    Array.from({ length: 200 }, async (_, w) => {
      for (let i = w; i < EXTRA; i += 200) await ask(`idle${i}`, "hello");
    }),
  );
  await sleep(3500); // every actor deactivates (GUPPY_IDLE_TIMEOUT_SECONDS=2)
  const after = rssMb(s.child.pid);
  console.log(
    `idle threads         RSS ${before.toFixed(1)} → ${after.toFixed(1)} MB over ${EXTRA} more deactivated threads = ${(((after - before) * 1024 * 1024) / EXTRA / 1024).toFixed(2)} KB/thread (target ≤ 5 KB)`,
  );
  agent.destroy();
  await s.stop();

  // 3b. The same in process, after GC: heap and RSS retained per deactivated thread.
  const idleProbe = fileURLToPath(new URL("./idle-threads-probe.mjs", import.meta.url));
  const idle = JSON.parse(
    execFileSync(process.execPath, ["--expose-gc", idleProbe, "4000"], { encoding: "utf8" }),
  );
  console.log(
    `idle in process      ${(idle.heapPerThread / 1024).toFixed(2)} KB heap, ${(idle.rssPerThread / 1024).toFixed(2)} KB RSS per deactivated thread after GC (target ≤ 5 KB)`,
  );
} finally {
  llm.close();
  for (const h of homes) rmSync(h, { recursive: true, force: true });
}
