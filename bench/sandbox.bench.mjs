// bench/sandbox: what the sandbox adds to each command. The `bash` tool runs `true` 100 times on
// the host as a plain child, on the host in a PID namespace of its own (unshare, where it can
// make one: root) and under bubblewrap, in one run, alternating, and prints the time per command
// of each and what unshare and bubblewrap add (target: bubblewrap adds ≤ 15 ms per command).
// Needs a build (npm run build). Prints figures; never fails on a timing.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execOnHost, hostContainment } from "../packages/core/dist/sandbox/host-sandbox.js";
import { createSandbox } from "../packages/core/dist/sandbox/sandbox.js";
import { threadDirOf } from "../packages/core/dist/store/thread-layout.js";
import { createBashTool } from "../packages/core/dist/tools/bash-tool.js";

const runs = 100;
const threadId = "bench:sandbox:default";
const home = mkdtempSync(join(tmpdir(), "guppy-bench-sandbox-"));
const workspaceDir = join(threadDirOf(home, threadId), "scratch");
mkdirSync(workspaceDir, { recursive: true });

const bwrapWorks =
  spawnSync("bwrap", ["--ro-bind", "/", "/", "--unshare-pid", "true"], { stdio: "ignore" })
    .status === 0;

function bashTool(config, containment) {
  const sandbox = createSandbox(config, { home, threadId });
  return createBashTool({
    workspaceDir,
    artifactsDir: () => join(home, "artifacts"),
    sandbox: containment
      ? { ...sandbox, exec: (command, o) => execOnHost(command, o, undefined, [], containment) }
      : sandbox,
    toolResultMaxChars: 10_000,
    bashTimeoutSeconds: 60,
  });
}

const contained = hostContainment();
const kinds = [["host", bashTool({ type: "host" }, { kind: "none", why: "bench" })]];
if (contained.kind === "pid-namespace") {
  kinds.push(["host+unshare", bashTool({ type: "host" }, contained)]);
} else console.log(`host+unshare: no PID namespace here (${contained.why})`);
if (bwrapWorks) kinds.push(["bubblewrap", bashTool({ type: "bwrap", mounts: [], network: true })]);
else console.log("bubblewrap: not usable here (bwrap missing or blocked); host only");

const totals = new Map(kinds.map(([name]) => [name, []]));
// Warm-up, then alternate so both see the same machine load.
for (const [, tool] of kinds) await tool.execute("warm", { command: "true" });
for (let i = 0; i < runs; i++) {
  for (const [name, tool] of kinds) {
    const t0 = performance.now();
    await tool.execute(`c${i}`, { command: "true" });
    totals.get(name).push(performance.now() - t0);
  }
}

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const [name, times] of totals) {
  console.log(
    `${name}: ${mean(times).toFixed(2)} ms per command (median ${median(times).toFixed(2)} ms, ${runs} runs of \`true\`)`,
  );
}
if (contained.kind === "pid-namespace") {
  const added = mean(totals.get("host+unshare")) - mean(totals.get("host"));
  const proc = contained.proc ? "with its own /proc" : "without its own /proc";
  console.log(`unshare (${proc}) adds ${added.toFixed(2)} ms per command`);
}
if (bwrapWorks) {
  const added = mean(totals.get("bubblewrap")) - mean(totals.get("host"));
  console.log(`bubblewrap adds ${added.toFixed(2)} ms per command (target ≤ 15 ms)`);
}
rmSync(home, { recursive: true, force: true });
