import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { identityPath, type PathTranslator } from "../prompt/path-translation.js";
import { killProcessTree } from "./process-tree.js";
import { trackTree, untrackTree } from "./running-trees.js";
import { toolEnv } from "./tool-env.js";

export interface ExecOptions {
  cwd: string;
  /** Milliseconds (1 to MAX_EXEC_TIMEOUT_MS); the whole process tree is killed when it passes. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Combined stdout+stderr chunks as they arrive. */
  onOutput?: (chunk: string) => void;
  /** Bytes of output kept in memory; the rest is counted and dropped. Default 10 MB. */
  maxBufferBytes?: number;
  /** The command's environment (default: guppy's), always without the secrets of tool-env.ts. */
  env?: NodeJS.ProcessEnv;
}

export interface ExecResult {
  /** Combined stdout and stderr in arrival order. */
  output: string;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  /** Bytes beyond maxBufferBytes that were not kept. */
  droppedBytes: number;
}

/** Where and how commands run: the host directly (Docker later behind the same shape). */
export interface Sandbox {
  readonly kind: "host";
  exec(command: string, options: ExecOptions): Promise<ExecResult>;
  /**
   * A host path as the agent's tools see it (identity on the host). A plain function, not a
   * method: the system prompt keys its shared sections by it.
   */
  readonly toAgentPath: PathTranslator;
}

const shell = existsSync("/bin/bash") ? "/bin/bash" : "/bin/sh";

/** The longest a Node timer waits (2^31 − 1 ms, ~24.8 days); a longer one fires at once. */
export const MAX_EXEC_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * Commands run on the host, with guppy's environment minus the secrets guppy itself consumes
 * (tool-env.ts). `modelProvider` is the provider of the thread's model: its key variables are
 * withheld even where they are general-purpose tokens such as GITHUB_TOKEN.
 */
export function createHostSandbox(options: { modelProvider?: string } = {}): Sandbox {
  return {
    kind: "host",
    exec: (command, execOptions) => execOnHost(command, execOptions, options.modelProvider),
    toAgentPath: identityPath,
  };
}

function execOnHost(
  command: string,
  options: ExecOptions,
  modelProvider: string | undefined,
): Promise<ExecResult> {
  const { timeoutMs } = options;
  if (!(timeoutMs >= 1 && timeoutMs <= MAX_EXEC_TIMEOUT_MS)) {
    // Never a run killed at once by an overflowed timer.
    return Promise.reject(
      new RangeError(`timeoutMs ${timeoutMs} is out of range: 1 to ${MAX_EXEC_TIMEOUT_MS}.`),
    );
  }
  const maxBuffer = options.maxBufferBytes ?? 10 * 1024 * 1024;
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let kept = 0;
    let droppedBytes = 0;
    let timedOut = false;
    let aborted = false;
    let settled = false;

    const tag = `GUPPY_EXEC_TAG=${randomUUID()}`;
    const child = spawn(shell, ["-c", command], {
      cwd: options.cwd,
      env: {
        ...toolEnv(options.env ?? process.env, modelProvider),
        GUPPY_EXEC_TAG: tag.slice("GUPPY_EXEC_TAG=".length),
      },
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });

    // Killed with the others if guppy must exit at once, and recorded for the next start if
    // guppy is killed (see running-trees.ts).
    if (child.pid !== undefined) trackTree(child.pid, tag);

    const onData = (data: Buffer) => {
      options.onOutput?.(data.toString("utf8"));
      if (kept + data.length <= maxBuffer) {
        chunks.push(data);
        kept += data.length;
      } else {
        const room = Math.max(0, maxBuffer - kept);
        if (room > 0) chunks.push(data.subarray(0, room));
        kept += room;
        droppedBytes += data.length - room;
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);

    const kill = (then?: () => void) => {
      if (child.pid !== undefined) killProcessTree(child.pid, then ? { tag, then } : { tag });
    };
    const untrack = () => {
      if (child.pid !== undefined) untrackTree(child.pid);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, timeoutMs);
    const onAbort = () => {
      aborted = true;
      kill();
    };
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener("abort", onAbort, { once: true });

    const finish = (exitCode: number | null, signal: NodeJS.Signals | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      // A background grandchild may outlive the shell; make sure nothing is left behind. (It
      // stays tracked until the SIGKILL. A command that ended by itself may leave a background
      // process on purpose: that one is not guppy's to kill any more.)
      if (timedOut || aborted) kill(untrack);
      else untrack();
      resolve({
        output: Buffer.concat(chunks).toString("utf8"),
        exitCode,
        signal,
        timedOut,
        aborted,
        droppedBytes,
      });
    };
    child.on("error", (error) => {
      chunks.push(Buffer.from(`${error.message}\n`));
      finish(127, null);
    });
    child.on("close", (code, signal) => finish(code, signal));
    // A background process may keep the output pipes open after the shell has exited. Do not
    // wait for it forever: shortly after exit (sooner after a kill), stop reading and finish.
    child.on("exit", (code, signal) => {
      const wait = timedOut || aborted ? 300 : 2000;
      setTimeout(() => {
        if (settled) return;
        if (!timedOut && !aborted) {
          chunks.push(
            Buffer.from("\n[background processes still hold the output; not waiting for them]\n"),
          );
        }
        child.stdout.destroy();
        child.stderr.destroy();
        finish(code, signal);
      }, wait).unref();
    });
  });
}
