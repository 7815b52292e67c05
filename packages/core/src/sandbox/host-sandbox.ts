import { spawn, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import { findEnvKeys, getProviders } from "@mariozechner/pi-ai";
import type { LoadedConfig } from "../config/load-config.js";
import { secretEnvNames } from "../config/settings-schema.js";
import { userUmask } from "../fs/private-files.js";
import type { Secret } from "../logging/redact.js";
import { modelSettings } from "../model/model-settings.js";
import { envKeyName, type ResolvedModel } from "../model/resolve-model.js";
import { webSettings } from "../web/web-settings.js";
import {
  createOutputCapture,
  type ExecOptions,
  type ExecResult,
  MAX_EXEC_TIMEOUT_MS,
} from "./exec.js";
import { killProcessTree, trackTree, untrackTree } from "./process-tree.js";

/** The shell commands run in (bash where there is one). */
export const shell = existsSync("/bin/bash") ? "/bin/bash" : "/bin/sh";

const DEFAULT_MAX_BUFFER_BYTES = 10 * 1024 * 1024;
/**
 * A command that prints without end (the timeout can be 24 h) must not fill the disk the store
 * needs; a build log or a test run stays far below this and is saved whole.
 */
const DEFAULT_MAX_SPILL_BYTES = 1024 * 1024 * 1024;

/**
 * Runs `command` on the host, with guppy's environment minus the secrets guppy itself consumes
 * (see `toolEnv`). `modelProvider` is the provider of the thread's model: its key variables are
 * withheld even where they are general-purpose tokens such as GITHUB_TOKEN. Where it can
 * (`containment`, default `hostContainment()`), the command runs in a PID namespace of its own.
 */
export function execOnHost(
  command: string,
  options: ExecOptions,
  modelProvider: string | undefined,
  secretEnv?: readonly string[],
  containment: HostContainment = hostContainment(),
): Promise<ExecResult> {
  const env = toolEnv(options.env ?? process.env, modelProvider, secretEnv);
  return execTracked(options, () =>
    containment.kind === "pid-namespace"
      ? {
          file: containment.unshare,
          args: [...unshareArgs(containment.proc), shell, "-c", command],
          env,
        }
      : { file: shell, args: ["-c", command], env },
  );
}

/**
 * How commands on the host are held together. In a PID namespace of their own (util-linux
 * `unshare --pid --fork --kill-child`) the shell is the namespace's first process: when it
 * ends or is killed, or unshare is, the kernel kills every process in the namespace, even one
 * that left the process group and cleared its environment (`setsid env -i …`, a double fork).
 * `proc`: the namespace has its own /proc (in a mount namespace that otherwise shows the host's
 * mounts as they are and come), so `ps`, `kill` and `$$` agree. `none`: commands run as plain
 * children, killed by process group, descendants and tag (see killProcessTree), and `why` says
 * why no namespace could be had.
 */
export type HostContainment =
  | { kind: "pid-namespace"; unshare: string; proc: boolean }
  | { kind: "none"; why: string };

/** unshare's arguments before the shell: a PID namespace, and with `proc` its own /proc. */
export function unshareArgs(proc: boolean): string[] {
  // slave: mounts the host makes later show inside; none made inside (the new /proc first) leaks out.
  const mount = proc ? ["--mount", "--mount-proc", "--propagation", "slave"] : [];
  return ["--pid", "--fork", "--kill-child", ...mount];
}

let probed: HostContainment | undefined;

/** The containment this process gives host commands: probed at its first call, then kept. */
export function hostContainment(): HostContainment {
  probed ??= probeHostContainment();
  return probed;
}

/**
 * Whether unshare can make a PID namespace here: as root (or with CAP_SYS_ADMIN) it can, with
 * its own /proc unless the mount is refused (some containers), then without. Not through a user
 * namespace for other users: the mapped ids would show other users' files as `nobody`, and sudo
 * and set-uid programs would stop working, which a command run "as you" must not meet.
 */
export function probeHostContainment(env: NodeJS.ProcessEnv = process.env): HostContainment {
  const unshare = findOnPath("unshare", env);
  if (unshare === undefined) return { kind: "none", why: "util-linux unshare is not on PATH" };
  const problem = (proc: boolean) => {
    const probe = spawnSync(unshare, [...unshareArgs(proc), "true"], {
      env,
      stdio: ["ignore", "ignore", "pipe"],
      timeout: 10_000,
    });
    if (probe.error) return probe.error.message;
    if (probe.status === 0) return undefined;
    const line = probe.stderr
      ?.toString("utf8")
      .split("\n")
      .find((l) => l.trim() !== "");
    return line?.trim().slice(0, 200) ?? `exit status ${probe.status ?? probe.signal}`;
  };
  const withProc = problem(true);
  if (withProc === undefined) return { kind: "pid-namespace", unshare, proc: true };
  if (problem(false) === undefined) return { kind: "pid-namespace", unshare, proc: false };
  return { kind: "none", why: withProc };
}

function findOnPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (!isAbsolute(dir)) continue;
    const path = join(dir, name);
    if (existsSync(path)) return path;
  }
  return undefined;
}

/**
 * The process a sandbox starts for one command (`bash -c`, `unshare … bash -c`, `bwrap … bash
 * -c`, `docker exec …`).
 */
export interface TrackedSpawn {
  file: string;
  args: string[];
  /** Its environment; the command's tag is added. */
  env: NodeJS.ProcessEnv;
  /**
   * Called once when the command is killed (timeout or abort), beside the kill of the local tree:
   * for processes this host cannot signal (a container's).
   */
  onKill?: () => void;
}

/**
 * Starts the process `spawnOf(tag)` describes (`tag` is the value of GUPPY_EXEC_TAG in the
 * environment of everything it starts) in `options.cwd`, in its own process group, and captures
 * its output. On timeout or abort its whole tree is killed: the group, every descendant and every
 * process carrying the tag; it is tracked meanwhile (`trackTree`) so that guppy's exit, or its
 * next start after a kill -9, ends it too.
 * Long by design: one closure per command whose timer, abort and exit handlers share its state.
 */
export function execTracked(
  options: ExecOptions,
  spawnOf: (tag: string) => TrackedSpawn,
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

    const tagValue = randomUUID();
    const tag = `GUPPY_EXEC_TAG=${tagValue}`;
    const spec = withUserUmask(spawnOf(tagValue));
    const child = spawn(spec.file, spec.args, {
      cwd: options.cwd,
      env: { ...spec.env, GUPPY_EXEC_TAG: tagValue },
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });

    // Killed with the others if guppy must exit at once, and recorded for the next start if
    // guppy is killed (see `recordRunningTrees`).
    if (child.pid !== undefined) trackTree(child.pid, tag);

    const onData = (data: Buffer) => {
      options.onOutput?.(data.toString("utf8"));
      capture.push(data);
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);

    let killedInside = false;
    const kill = (then?: () => void) => {
      if (!killedInside && spec.onKill) {
        killedInside = true;
        spec.onKill();
      }
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

/**
 * The variables of core's settings marked secret (GUPPY_API_KEY, BRAVE_API_KEY), withheld even
 * when no `secretEnv` is given; an app's (GUPPY_API_TOKEN, the bot tokens) come in `secretEnv`.
 */
const secretSettingVars: readonly string[] = secretEnvNames({ ...modelSettings, ...webSettings });

/**
 * General-purpose tokens that pi-ai also reads as a provider's key (GH_TOKEN and GITHUB_TOKEN
 * for github-copilot, HF_TOKEN for huggingface). A user's own tools (gh, git, huggingface-cli)
 * use them too, so they are withheld only when the model comes from the provider that reads them.
 */
const sharedTokens = new Set(["GH_TOKEN", "GITHUB_TOKEN", "HF_TOKEN"]);

/**
 * Names of the variables in guppy's environment that hold secrets guppy itself consumes, which
 * the commands its tools run must not see (the model would, and the saved conversation): every
 * setting marked secret, and every provider API-key variable pi-ai reads that is set — pi-ai
 * knows which (findEnvKeys looks in process.env) — plus the key variable guppy reads for the
 * model's provider on a custom endpoint (OLLAMA_API_KEY, ...).
 */
export function withheldEnvNames(
  modelProvider?: string,
  secretEnv: readonly string[] = [],
): Set<string> {
  // GUPPY_HOME too: it points at settings.json and api-token (the file tools refuse those).
  const names = new Set(["GUPPY_HOME", ...secretSettingVars, ...secretEnv]);
  for (const provider of getProviders()) {
    for (const name of findEnvKeys(provider) ?? []) {
      if (!sharedTokens.has(name) || provider === modelProvider) names.add(name);
    }
  }
  if (modelProvider) names.add(envKeyName(modelProvider));
  return names;
}

/** `env` without the variables withheldEnvNames names. */
export function toolEnv(
  env: NodeJS.ProcessEnv,
  modelProvider?: string,
  secretEnv?: readonly string[],
): NodeJS.ProcessEnv {
  const withheld = withheldEnvNames(modelProvider, secretEnv);
  const kept: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) if (!withheld.has(name)) kept[name] = value;
  return kept;
}

/**
 * `spec` started under the user's own umask (see `userUmask`) rather than guppy's 077: through
 * `sh -c 'umask "$0" && exec "$@"'`, which sets it and becomes the process (same pid, so the
 * tree's tracking and kill are unchanged). Node's spawn takes no umask, and changing the
 * process's own around a spawn would also loosen the files its I/O threads create meanwhile.
 * A `docker exec` keeps the container's umask: the client's is not passed on.
 */
export function withUserUmask(spec: TrackedSpawn, umask = userUmask()): TrackedSpawn {
  if (umask === undefined) return spec;
  const octal = umask.toString(8).padStart(4, "0");
  return {
    ...spec,
    file: "/bin/sh",
    args: ["-c", 'umask "$0" && exec "$@"', octal, spec.file, ...spec.args],
  };
}

/**
 * The secrets guppy holds for this configuration: every setting marked secret (core's and the
 * app's, from flags, the environment or settings.json), the model's API key, and every
 * provider key variable pi-ai reads that is set — the variables withheld from tools.
 */
export function configuredSecrets<C extends LoadedConfig>(
  config: C,
  resolved?: ResolvedModel,
  env: NodeJS.ProcessEnv = process.env,
): Secret[] {
  const secrets: Secret[] = [];
  const values = config as unknown as Record<string, unknown>;
  for (const [key, def] of Object.entries(config.settings)) {
    const value = values[key];
    if (def.secret && typeof value === "string") secrets.push({ name: def.env ?? key, value });
  }
  const provider = resolved?.model.provider;
  const fromEnv: Secret[] = [];
  for (const name of withheldEnvNames(provider, secretEnvNames(config.settings))) {
    const value = env[name];
    if (name !== "GUPPY_HOME" && value) fromEnv.push({ name, value });
  }
  const apiKey = resolved?.apiKey;
  if (apiKey && !secrets.some((s) => s.value === apiKey)) {
    secrets.push({
      name: fromEnv.find((s) => s.value === apiKey)?.name ?? "apiKey",
      value: apiKey,
    });
  }
  return [...secrets, ...fromEnv];
}
