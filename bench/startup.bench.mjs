// bench/startup: how fast guppy starts.
//  - `guppy --version`: median wall time and peak RSS (targets ≤ 120 ms, ≤ 60 MB)
//  - `guppy chat -m` against a local mock LLM: process start → first request at the mock (target ≤ 600 ms)
// Needs a build (npm run build). Prints figures; never fails on a timing.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { LLMock } from "@copilotkit/aimock";

const bin = fileURLToPath(new URL("../packages/guppy/bin/guppy.js", import.meta.url));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

// 1. guppy --version
const runs = 21;
const times = [];
const rss = [];
const hasTime = existsSync("/usr/bin/time");
for (let i = 0; i < runs; i++) {
  const t0 = performance.now();
  const r = hasTime
    ? spawnSync("/usr/bin/time", ["-f", "%M", process.execPath, bin, "--version"], {
        encoding: "utf8",
      })
    : spawnSync(process.execPath, [bin, "--version"], { encoding: "utf8" });
  times.push(performance.now() - t0);
  if (hasTime) rss.push(Number(r.stderr.trim().split("\n").at(-1)) / 1024);
}
console.log(
  `guppy --version     median ${median(times).toFixed(1)} ms over ${runs} runs (target ≤ 120 ms)`,
);
console.log(
  hasTime
    ? `guppy --version     peak RSS ${median(rss).toFixed(1)} MB (target ≤ 60 MB)`
    : "guppy --version     peak RSS n/a (/usr/bin/time not installed)",
);

// 1b. the same through the command the README's install puts on PATH (`npm link -w guppy`, into a
// throwaway prefix): the shebang's `env node` lookup and the symlink cost a little.
const prefix = mkdtempSync(join(tmpdir(), "guppy-bench-prefix-"));
const link = spawnSync("npm", ["link", "-w", "guppy", "--no-audit", "--no-fund"], {
  cwd: fileURLToPath(new URL("..", import.meta.url)),
  env: { ...process.env, npm_config_prefix: prefix },
  encoding: "utf8",
});
if (link.status === 0) {
  const linked = join(prefix, "bin", "guppy");
  const linkedTimes = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    spawnSync(linked, ["--version"], { cwd: tmpdir(), encoding: "utf8" });
    linkedTimes.push(performance.now() - t0);
  }
  console.log(
    `guppy --version     median ${median(linkedTimes).toFixed(1)} ms over ${runs} runs as the linked \`guppy\` on PATH (target ≤ 120 ms)`,
  );
} else {
  console.log(`guppy --version     linked: npm link failed (${link.stderr.trim().split("\n")[0]})`);
}
rmSync(prefix, { recursive: true, force: true });

// 2. guppy chat -m: process start → first request reaching the mock
const mock = new LLMock({ port: 0, host: "127.0.0.1" });
let arrived;
mock.on({ predicate: () => true }, () => {
  arrived?.(performance.now());
  return { content: "ok" };
});
const url = await mock.start();
const home = mkdtempSync(join(tmpdir(), "guppy-bench-startup-"));
const firstRequest = [];
for (let i = 0; i < 9; i++) {
  const reached = new Promise((resolve) => {
    arrived = resolve;
  });
  const t0 = performance.now();
  const child = spawn(process.execPath, [bin, "chat", "-m", "hi", "--session", `b${i}`], {
    env: {
      ...process.env,
      GUPPY_HOME: home,
      GUPPY_MODEL: "openai/gpt-4o-mini",
      GUPPY_BASE_URL: `${url}/v1`,
      GUPPY_API: "openai-completions",
      GUPPY_API_KEY: "bench",
    },
    stdio: "ignore",
  });
  const t1 = await reached;
  firstRequest.push(t1 - t0);
  await new Promise((resolve) => child.on("close", resolve));
}
await mock.stop();
rmSync(home, { recursive: true, force: true });
console.log(
  `guppy chat -m       start → first LLM request median ${median(firstRequest).toFixed(1)} ms (target ≤ 600 ms)`,
);
