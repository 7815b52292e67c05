import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { threadDirOf } from "../../src/store/thread-layout.js";

export const THREAD = "telegram:42:default";

/**
 * A stand-in `docker` (no engine on these machines): it appends its argv to $DOCKER_LOG, one JSON
 * line per call, and runs `exec`'s command here, in the host folder a /workspace path stands for
 * ($DOCKER_WORKSPACE_HOST), with the -e variables, so its output flows. `exec missing …` fails
 * the way docker does for a container that is not running.
 */
const STAND_IN = `#!/usr/bin/env node
const { appendFileSync } = require("node:fs");
const { spawnSync } = require("node:child_process");
const args = process.argv.slice(2);
appendFileSync(process.env.DOCKER_LOG, JSON.stringify(args) + "\\n");
if (args[0] !== "exec") process.exit(0);
let i = 1;
let cwd = process.cwd();
const env = { PATH: process.env.PATH };
while (args[i] && args[i].startsWith("-")) {
  if (args[i] === "-w") cwd = args[i + 1].replace(/^\\/workspace/, process.env.DOCKER_WORKSPACE_HOST);
  if (args[i] === "-e") { const [k, ...v] = args[i + 1].split("="); env[k] = v.join("="); }
  i += 2;
}
const container = args[i];
if (container === "missing") {
  process.stderr.write("Error response from daemon: No such container: missing\\n");
  process.exit(1);
}
const r = spawnSync(args[i + 1], args.slice(i + 2), { cwd, env, stdio: "inherit" });
process.exit(r.status ?? 1);
`;

export function standIn() {
  const root = mkdtempSync(join(tmpdir(), "guppy-docker-"));
  const bin = join(root, "bin");
  mkdirSync(bin);
  writeFileSync(join(bin, "docker"), STAND_IN);
  chmodSync(join(bin, "docker"), 0o755);
  const home = join(root, "guppy-home");
  const workspace = join(threadDirOf(home, THREAD), "scratch");
  mkdirSync(workspace, { recursive: true });
  const log = join(root, "docker.log");
  const env = {
    ...process.env,
    PATH: `${bin}:${process.env.PATH}`,
    DOCKER_LOG: log,
    DOCKER_WORKSPACE_HOST: home,
  };
  const calls = (): string[][] =>
    existsSync(log)
      ? readFileSync(log, "utf8")
          .trim()
          .split("\n")
          .map((line) => JSON.parse(line) as string[])
      : [];
  return { root, bin, home, workspace, env, calls };
}
