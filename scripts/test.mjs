#!/usr/bin/env node
// `npm test`: the build first (the CLI tests run the built guppy), then lint, the cycle and
// layer checks, the type check and the tests side by side. The checks' output is printed
// whole when each ends; the tests' streams as it comes. Exits non-zero if any of them failed.
// Arguments go to vitest (`npm test -- --project unit`).
import { spawn } from "node:child_process";

const npm = process.platform === "win32" ? "npm.cmd" : "npm";

function run(name, command, args, { stream = false } = {}) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(command, args, { stdio: stream ? "inherit" : ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout?.on("data", (d) => {
      output += d;
    });
    child.stderr?.on("data", (d) => {
      output += d;
    });
    child.on("close", (code, signal) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const ok = code === 0;
      if (!stream) process.stdout.write(`\n── ${name} (${seconds} s) ──\n${output}`);
      process.stdout.write(
        `── ${name}: ${ok ? "ok" : `failed (${signal ?? code})`} in ${seconds} s\n`,
      );
      resolve(ok);
    });
  });
}

if (!(await run("build", npm, ["run", "build"]))) process.exit(1);
const results = await Promise.all([
  run("lint", npm, ["run", "lint"]),
  run("cycles", npm, ["run", "cycles"]),
  run("typecheck", npm, ["run", "typecheck"]),
  run("vitest", "npx", ["vitest", "run", ...process.argv.slice(2)], { stream: true }),
]);
process.exit(results.every(Boolean) ? 0 : 1);
