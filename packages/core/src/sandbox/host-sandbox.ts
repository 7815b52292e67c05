import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { identityPath, type PathTranslator } from "../prompt/path-translation.js";
import { createOutputCapture, type OutputOverflow } from "./output-capture.js";
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
  /**
   * Bytes of output kept in memory (default 10 MiB). A longer output keeps its first and last
   * half of them, and goes whole to the `spillTo` file as it comes.
   */
  maxBufferBytes?: number;
  /** The file an output longer than `maxBufferBytes` is saved to (called only then). */
  spillTo?: () => string;
  /**
   * Most bytes of such an output's start the file holds (default 1 GiB); past it, only its end
   * (the last half of `maxBufferBytes`) follows, after a line saying how much was left out.
   */
  maxSpillBytes?: number;
  /** The command's environment (default: guppy's), always without the secrets of tool-env.ts. */
  env?: NodeJS.ProcessEnv;
}

export interface ExecResult {
  /** Combined stdout and stderr in arrival order: all of it, or its head (see `overflow`). */
  output: string;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  /** Set when the output passed `maxBufferBytes`: its tail, its size and where it was saved. */
  overflow?: OutputOverflow;
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

const DEFAULT_MAX_BUFFER_BYTES = 10 * 1024 * 1024;
/**
 * A command that prints without end (the timeout can be 24 h) must not fill the disk the store
 * needs; a build log or a test run stays far below this and is saved whole.
 */
const DEFAULT_MAX_SPILL_BYTES = 1024 * 1024 * 1024;

/** The longest a Node timer waits (2^31 − 1 ms, ~24.8 days); a longer one fires at once. */
export const MAX_EXEC_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * Commands run on the host, with guppy's environment minus the secrets guppy itself consumes
 * (tool-env.ts). `modelProvider` is the provider of the thread's model: its key variables are
 * withheld even where they are general-purpose tokens such as GITHUB_TOKEN. `secretEnv`: the
 * variables of the app's secret settings (a bot token), withheld too.
 */
export function createHostSandbox(
  options: { modelProvider?: string; secretEnv?: readonly string[] } = {},
): Sandbox {
  return {
    kind: "host",
    exec: (command, execOptions) =>
      execOnHost(command, execOptions, options.modelProvider, options.secretEnv),
    toAgentPath: identityPath,
  };
}

function execOnHost(
  command: string,
  options: ExecOptions,
  modelProvider: string | undefined,
  secretEnv: readonly string[] | undefined,
): Promise<ExecResult> {
  const { timeoutMs } = options;
  if (!(timeoutMs >= 1 && timeoutMs <= MAX_EXEC_TIMEOUT_MS)) {
    // Never a run killed at once by an overflowed timer.
    return Promise.reject(
      new RangeError(`timeoutMs ${timeoutMs} is out of range: 1 to ${MAX_EXEC_TIMEOUT_MS}.`),
    );
  }
  const capture = createOutputCapture({
    memoryBytes: options.maxBufferBytes ?? DEFAULT_MAX_BUFFER_BYTES,
    maxFileBytes: options.maxSpillBytes ?? DEFAULT_MAX_SPILL_BYTES,
    ...(options.spillTo ? { spillTo: options.spillTo } : {}),
  });
  return new Promise((resolve) => {
    let timedOut = false;
    let aborted = false;
    let settled = false;

    const tag = `GUPPY_EXEC_TAG=${randomUUID()}`;
    const child = spawn(shell, ["-c", command], {
      cwd: options.cwd,
      env: {
        ...toolEnv(options.env ?? process.env, modelProvider, secretEnv),
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
      capture.push(data);
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
      const { text, overflow } = capture.finish();
      resolve({
        output: text,
        exitCode,
        signal,
        timedOut,
        aborted,
        ...(overflow ? { overflow } : {}),
      });
    };
    child.on("error", (error) => {
      capture.push(Buffer.from(`${error.message}\n`));
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
          capture.push(
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
