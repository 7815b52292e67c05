import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { ConfigError } from "../config/config-error.js";
import type { LoadedConfig } from "../config/load-config.js";
import { listValue, oneOf, type ParseResult, type Parser } from "../config/setting-parsers.js";
import type { SettingDefinitions, SettingValues } from "../config/settings-schema.js";
import { type HostContainment, hostContainment } from "./host-sandbox.js";
import type { SandboxConfig, SandboxMount } from "./types.js";

// The start-up decision: which sandbox GUPPY_SANDBOX asks for, and whether it can work here.
// Made once per process (`guppy serve`, `guppy chat`); each thread's sandbox is built from it.

export interface ResolvedSandbox {
  sandbox: SandboxConfig;
  /** Said once at start: `auto` found no usable bubblewrap and runs tools on the host. */
  notice?: string;
}

type SandboxSettings = Pick<SandboxSettingValues, "sandbox" | "sandboxMounts" | "sandboxNetwork"> &
  Pick<LoadedConfig, "sources" | "settingsPath">;

const INSTALL = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)";
const USERNS =
  "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu)";

/**
 * The sandbox of `config`: `auto` is bubblewrap when `bwrap` is on PATH and a test run of it
 * works, else the host with a notice saying so and how to get it. `bwrap` or `docker:<c>` that
 * cannot work here, or an extra mount that does not exist, is a ConfigError naming the fix —
 * never a silent fall back to the host. `env` is where PATH is read (default: process.env).
 */
export function resolveSandbox(
  config: SandboxSettings,
  options: { env?: NodeJS.ProcessEnv } = {},
): ResolvedSandbox {
  const env = options.env ?? process.env;
  const mounts = parseMounts(config.sandboxMounts ?? []);
  const network = config.sandboxNetwork !== "off";
  const setting = settingName(config);
  const value = config.sandbox ?? "auto";
  if (value === "host") {
    hostContainment(); // probed now, at start, rather than at the first command
    return { sandbox: { type: "host" } };
  }
  if (value.startsWith("docker:")) {
    const container = value.slice("docker:".length);
    const problem = dockerProblem(container, env);
    if (problem) {
      throw new ConfigError(
        `${setting} is ${value} but ${problem}: start the container with guppy's thread folders mounted at /workspace (docs/configuration.md), or set ${setting} to bwrap or host.`,
      );
    }
    return { sandbox: { type: "docker", container } };
  }
  const problem = bwrapProblem(env);
  if (value === "bwrap") {
    if (problem === "missing") {
      throw new ConfigError(
        `${setting} is bwrap but bwrap is not on PATH: ${INSTALL}, or set ${setting}=host.`,
      );
    }
    if (problem) {
      throw new ConfigError(
        `${setting} is bwrap but bubblewrap cannot run here (${problem}): ${USERNS}, or set ${setting}=host.`,
      );
    }
    return { sandbox: { type: "bwrap", mounts, network } };
  }
  if (problem === undefined) return { sandbox: { type: "bwrap", mounts, network } };
  hostContainment();
  const why =
    problem === "missing" ? "bwrap is not on PATH" : `bubblewrap cannot run here (${problem})`;
  const fix = problem === "missing" ? INSTALL : USERNS;
  return {
    sandbox: { type: "host" },
    notice: `Tools run on the host, unconfined as you: ${why}. For the sandbox, ${fix}; GUPPY_SANDBOX=host says the host is meant.`,
  };
}

/**
 * A short line for /status and `guppy config`. `containment`: how host commands are held
 * together (default: as this process found at start).
 */
export function describeSandbox(
  sandbox: SandboxConfig,
  containment: HostContainment = hostContainment(),
): string {
  switch (sandbox.type) {
    case "host": {
      return containment.kind === "pid-namespace"
        ? "host — tools run unconfined as you; each command's process tree is contained"
        : `host — tools run unconfined as you; commands' process trees are not contained (${containment.why})`;
    }
    case "bwrap": {
      const n = sandbox.mounts.length;
      const mounts = n === 0 ? "no extra mounts" : `${n} extra mount${n === 1 ? "" : "s"}`;
      return `bubblewrap (network ${sandbox.network ? "on" : "off"}, ${mounts})`;
    }
    case "docker":
      return `docker container ${sandbox.container} (thread folders at /workspace; one container for every thread)`;
  }
}

/** GUPPY_SANDBOX_MOUNTS entries (`path[:ro|:rw]`, read-only unless `:rw`); each must exist. */
export function parseMounts(entries: readonly string[]): SandboxMount[] {
  return entries.map((entry) => {
    const match = /^(.*?)(?::(ro|rw))?$/.exec(entry.trim());
    const path = match?.[1] ?? entry;
    const access = match?.[2] === "rw" ? "rw" : "ro";
    if (!existsSync(path)) {
      throw new ConfigError(
        `GUPPY_SANDBOX_MOUNTS names ${path}, which does not exist: create it or take it off the list.`,
      );
    }
    return { path, access };
  });
}

/** How errors name the setting: where its value came from. */
function settingName(config: SandboxSettings): string {
  return config.sources?.sandbox === "settings"
    ? `"sandbox" in ${config.settingsPath}`
    : "GUPPY_SANDBOX";
}

/** Undefined when a test run of bwrap works; "missing" when it is not on PATH; else its error. */
export function bwrapProblem(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const probe = spawnSync("bwrap", ["--ro-bind", "/", "/", "--unshare-pid", "true"], {
    env,
    stdio: ["ignore", "ignore", "pipe"],
    timeout: 10_000,
  });
  const code = (probe.error as NodeJS.ErrnoException | undefined)?.code;
  if (code === "ENOENT") return "missing";
  if (probe.error) return probe.error.message;
  if (probe.status === 0) return undefined;
  return firstLine(probe.stderr) ?? `exit status ${probe.status ?? probe.signal}`;
}

function dockerProblem(container: string, env: NodeJS.ProcessEnv): string | undefined {
  const probe = spawnSync("docker", ["exec", container, "true"], {
    env,
    stdio: ["ignore", "ignore", "pipe"],
    timeout: 20_000,
  });
  const code = (probe.error as NodeJS.ErrnoException | undefined)?.code;
  if (code === "ENOENT") return "the docker command is not on PATH";
  if (probe.error) return `docker exec ${container} true failed: ${probe.error.message}`;
  if (probe.status === 0) return undefined;
  const why = firstLine(probe.stderr) ?? `exit status ${probe.status ?? probe.signal}`;
  return `docker exec ${container} true failed (${why})`;
}

function firstLine(bytes: Buffer | undefined): string | undefined {
  const line = bytes
    ?.toString("utf8")
    .split("\n")
    .find((l) => l.trim() !== "");
  return line?.trim().slice(0, 200);
}

/** Where tools run, what they see and whether they reach the network. */
export const sandboxSettings = {
  sandbox: {
    env: "GUPPY_SANDBOX",
    parse: sandboxValue(),
    default: "auto",
    description:
      "Where tools run: `auto` (bubblewrap when it works here, else the host, said at start), `bwrap`, `docker:<container>` or `host` (unconfined)",
  },
  sandboxMounts: {
    env: "GUPPY_SANDBOX_MOUNTS",
    parse: mountListValue(),
    description:
      "Extra folders bubblewrap shows the tools, comma-separated; each `path`, `path:ro` or `path:rw` (read-only unless `:rw`)",
  },
  sandboxNetwork: {
    env: "GUPPY_SANDBOX_NETWORK",
    parse: oneOf(["on", "off"] as const),
    default: "on",
    description: "Network inside the bubblewrap sandbox: `on` or `off` (loopback only)",
  },
} satisfies SettingDefinitions;

export type SandboxSettingValues = SettingValues<typeof sandboxSettings>;

/** GUPPY_SANDBOX: `auto`, `bwrap`, `host` or `docker:<container>` (a Docker container name or id). */
function sandboxValue(): Parser<string> {
  const expected = "one of auto, bwrap, docker:<container>, host";
  const parse = (raw: unknown): ParseResult<string> => {
    const value = typeof raw === "string" ? raw.trim() : "";
    if (["auto", "bwrap", "host"].includes(value)) return { ok: true, value };
    if (/^docker:[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(value)) return { ok: true, value };
    return { ok: false, expected };
  };
  return Object.assign(parse, { expected });
}

/** GUPPY_SANDBOX_MOUNTS: absolute paths, each with an optional `:ro` or `:rw`. */
function mountListValue(): Parser<string[]> {
  const list = listValue();
  const expected = "a comma-separated list of absolute paths, each path[:ro|:rw]";
  const parse = (raw: unknown): ParseResult<string[]> => {
    const parsed = list(raw);
    if (!parsed.ok) return { ok: false, expected };
    const ok = parsed.value.every((entry) => entry.replace(/:(ro|rw)$/, "").startsWith("/"));
    return ok ? parsed : { ok: false, expected };
  };
  return Object.assign(parse, { expected, list: true as const });
}
