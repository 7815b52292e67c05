import { sep } from "node:path";
import type { ExecOptions, ExecResult } from "./exec.js";
import { execOnHost } from "./host-sandbox.js";

/** A kind of sandbox and its settings: a new kind is one member here and one case below. */
export type SandboxConfig = { type: "host" };

/**
 * What the sandbox withholds from commands: the keys of the model's provider (even general ones
 * such as GITHUB_TOKEN) and the variables of the app's secret settings (a bot token).
 */
export interface HostSandboxOptions {
  modelProvider?: string;
  secretEnv?: readonly string[];
}

/** Where and how the tools' commands run, and how host paths look from there. */
export interface Sandbox {
  readonly kind: SandboxConfig["type"];
  exec(command: string, options: ExecOptions): Promise<ExecResult>;
  /**
   * A host path as the agent's tools see it (identity on the host). A plain function, not a
   * method: the system prompt keys its shared sections by it.
   */
  readonly toAgentPath: PathTranslator;
}

/**
 * The sandbox `config` names. Commands get guppy's environment minus the secrets guppy consumes;
 * `modelProvider` (the thread model's provider) also withholds its key variables.
 */
export function createSandbox(config: SandboxConfig, options: HostSandboxOptions = {}): Sandbox {
  switch (config.type) {
    case "host":
      return {
        kind: "host",
        exec: (command, execOptions) =>
          execOnHost(command, execOptions, options.modelProvider, options.secretEnv),
        toAgentPath: identityPath,
      };
  }
}

/** Maps a host path to the path the agent's tools see (the sandbox decides). */
export type PathTranslator = (hostPath: string) => string;

/** The host sandbox: tools see host paths as they are. */
export const identityPath: PathTranslator = (hostPath) => hostPath;

export interface PathMapping {
  /** A host directory, e.g. the thread's workspace. */
  host: string;
  /** Where the sandbox mounts it, e.g. `/workspace`. */
  agent: string;
}

/**
 * A translator for a sandbox that mounts host directories elsewhere (a Docker sandbox mapping the
 * workspace to `/workspace`): the longest matching host prefix wins; other paths are unchanged.
 */
export function createPathMapper(mappings: readonly PathMapping[]): PathTranslator {
  const ordered = [...mappings].sort((a, b) => b.host.length - a.host.length);
  return (hostPath) => {
    for (const { host, agent } of ordered) {
      const base = host.endsWith(sep) ? host.slice(0, -1) : host;
      if (hostPath === base) return agent;
      if (hostPath.startsWith(base + sep)) {
        const rest = hostPath
          .slice(base.length + 1)
          .split(sep)
          .join("/");
        return `${agent.replace(/\/$/, "")}/${rest}`;
      }
    }
    return hostPath;
  };
}
