// bench/mcp-start: `guppy serve` start → GET /health answering with two stdio MCP servers
// configured (server-everything, each a node process), against the same start with none, in
// the same run and interleaved (target ≤ 700 ms: the servers connect in the background, the
// gateway's readiness never waits for them). Also: how long after the start both servers'
// tools were there (the gateway log's "connected" lines), and that no server process outlives
// the gateway's SIGTERM. Needs a build (npm run build). Prints figures; never fails on a timing.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const bin = fileURLToPath(new URL("../packages/guppy/bin/guppy.js", import.meta.url));
const everything = fileURLToPath(
  new URL("../node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url),
);
const ROUNDS = Math.max(1, Number(process.env.BENCH_MCP_ROUNDS ?? 7));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const freePort = async () => {
  const s = createServer();
  await new Promise((r) => s.listen(0, "127.0.0.1", r));
  const port = s.address().port;
  await new Promise((r) => s.close(r));
  return port;
};

/** Processes whose command line holds `marker` (the MCP servers of one start). */
function processesWith(marker) {
  const found = [];
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker)) found.push(Number(pid));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** The gateway log's lines (wherever under <home>/logs it writes them). */
function logText(home) {
  const dir = join(home, "logs");
  if (!existsSync(dir)) return "";
  return readdirSync(dir)
    .map((f) => readFileSync(join(dir, f), "utf8"))
    .join("\n");
}

async function startServe(withMcp, round) {
  const home = mkdtempSync(join(tmpdir(), "guppy-bench-mcp-"));
  const marker = `guppy-bench-mcp-${process.pid}-${round}-${withMcp ? "mcp" : "none"}`;
  if (withMcp) {
    // The extra argument marks the processes (server-everything reads only its first).
    const server = { command: process.execPath, args: [everything, "stdio", marker] };
    writeFileSync(
      join(home, "settings.json"),
      JSON.stringify({ mcpServers: { one: server, two: server } }),
    );
  }
  const port = await freePort();
  const t0 = performance.now();
  const child = spawn(process.execPath, [bin, "serve"], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      GUPPY_HOME: home,
      GUPPY_MODEL: "openai/faux",
      GUPPY_BASE_URL: "http://127.0.0.1:9/v1",
      GUPPY_API: "openai-completions",
      GUPPY_API_KEY: "bench",
      GUPPY_HTTP_PORT: String(port),
      GUPPY_DEBUG: "true",
    },
    stdio: ["ignore", "ignore", "ignore"],
  });
  for (;;) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health`)).ok) break;
    } catch {
      // not listening yet
    }
    if (performance.now() - t0 > 30_000) throw new Error("guppy serve did not start");
    await sleep(2);
  }
  const ready = performance.now() - t0;
  let toolsAt;
  if (withMcp) {
    while (performance.now() - t0 < 60_000) {
      const connected = logText(home).match(/MCP server \\?"(one|two)\\?" connected/g) ?? [];
      if (connected.length >= 2) {
        toolsAt = performance.now() - t0;
        break;
      }
      await sleep(20);
    }
  }
  const servers = processesWith(marker).length;
  const exited = new Promise((r) => child.on("exit", r));
  child.kill("SIGTERM");
  await exited;
  await sleep(200);
  const left = processesWith(marker);
  for (const pid of left) process.kill(pid, "SIGKILL");
  rmSync(home, { recursive: true, force: true });
  return { ready, toolsAt, servers, left: left.length };
}

const none = [];
const mcp = [];
const toolsAt = [];
let orphans = 0;
let running = 0;
for (let round = 0; round < ROUNDS; round++) {
  // Which goes first alternates: neither pays for the other's leftovers every time.
  if (round % 2 === 0) none.push((await startServe(false, round)).ready);
  const r = await startServe(true, round);
  mcp.push(r.ready);
  if (r.toolsAt !== undefined) toolsAt.push(r.toolsAt);
  running = Math.max(running, r.servers);
  orphans += r.left;
  if (round % 2 === 1) none.push((await startServe(false, round)).ready);
}
console.log(
  `guppy serve start → ready, 2 stdio MCP servers  median ${median(mcp).toFixed(1)} ms over ${ROUNDS} starts (target ≤ 700 ms)`,
);
console.log(
  `guppy serve start → ready, no MCP servers       median ${median(none).toFixed(1)} ms (same run, interleaved)`,
);
console.log(
  toolsAt.length > 0
    ? `both servers' tools there after the start        median ${median(toolsAt).toFixed(1)} ms (${toolsAt.length}/${ROUNDS} starts; in the background)`
    : "both servers' tools there after the start        n/a (no connected lines in the log)",
);
console.log(
  `server processes running / left after SIGTERM    ${running} / ${orphans} (expected 2 / 0)`,
);
