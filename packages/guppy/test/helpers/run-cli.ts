import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The built CLI entry (tests run after `tsc -b`, as `npm test` does). */
export const guppyBin = fileURLToPath(new URL("../../bin/guppy.js", import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Environment with every GUPPY_* / provider key removed, so the host's settings never leak into a test. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(GUPPY_|OPENAI_|ANTHROPIC_|TELEGRAM_|SLACK_|DISCORD_|BRAVE_)/.test(k)) continue;
    env[k] = v;
  }
  return { ...env, NO_COLOR: "1", ...extra };
}

/** Runs `guppy <args>` as a child process and collects its output. */
export function runCli(
  args: string[],
  options: {
    env?: NodeJS.ProcessEnv;
    /** Standard input: all at once, or in chunks `gapMs` apart (default 150), then closed. */
    input?: string | { chunks: string[]; gapMs?: number };
    timeoutMs?: number;
    cwd?: string;
  } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [guppyBin, ...args], {
      env: options.env ?? cleanEnv(),
      ...(options.cwd ? { cwd: options.cwd } : {}),
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`guppy ${args.join(" ")} timed out\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, options.timeoutMs ?? 20_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    const input = options.input ?? "";
    if (typeof input === "string") {
      child.stdin.end(input);
      return;
    }
    const write = (i: number) => {
      if (i === input.chunks.length) {
        child.stdin.end();
        return;
      }
      child.stdin.write(input.chunks[i] as string);
      setTimeout(() => write(i + 1), input.gapMs ?? 150);
    };
    write(0);
  });
}

/** A fresh GUPPY_HOME under the system temp dir; `cleanup()` removes it. */
export function tempHome(): { home: string; cleanup: () => void } {
  const home = mkdtempSync(join(tmpdir(), "guppy-test-"));
  return { home, cleanup: () => rmSync(home, { recursive: true, force: true }) };
}
