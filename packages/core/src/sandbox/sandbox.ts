import { sep } from "node:path";
import type { AgentTool, AgentToolResult } from "@mariozechner/pi-agent-core";
import { execInBwrap } from "./bwrap-sandbox.js";
import { DOCKER_WORKSPACE, execInDocker } from "./docker-sandbox.js";
import { execOnHost } from "./host-sandbox.js";
import { threadView } from "./thread-view.js";
import type { PathTranslator, Sandbox, SandboxConfig, SandboxOptions } from "./types.js";

export type {
  HostSandboxOptions,
  PathTranslator,
  Sandbox,
  SandboxConfig,
  SandboxMount,
  SandboxOptions,
} from "./types.js";

/**
 * The sandbox `config` names, for one thread. Commands get guppy's environment minus the secrets
 * guppy consumes and GUPPY_HOME; `modelProvider` (the thread model's provider) also withholds its
 * key variables. bwrap and docker need `home` and `threadId`.
 */
export function createSandbox(config: SandboxConfig, options: SandboxOptions = {}): Sandbox {
  const secrets = {
    ...(options.modelProvider ? { modelProvider: options.modelProvider } : {}),
    ...(options.secretEnv ? { secretEnv: options.secretEnv } : {}),
  };
  switch (config.type) {
    case "host":
      return {
        kind: "host",
        exec: (command, execOptions) =>
          execOnHost(command, execOptions, options.modelProvider, options.secretEnv),
        toAgentPath: identityPath,
        toHostPath: identityPath,
      };
    case "bwrap": {
      const { home, threadId } = threadOf(options, "bwrap");
      const view = threadView(config, home, threadId);
      return {
        kind: "bwrap",
        exec: (command, execOptions) =>
          execInBwrap(command, execOptions, { view, network: config.network, ...secrets }),
        toAgentPath: identityPath,
        toHostPath: identityPath,
      };
    }
    case "docker": {
      const { home } = threadOf(options, "docker");
      const toAgentPath = createPathMapper([{ host: home, agent: DOCKER_WORKSPACE }]);
      return {
        kind: "docker",
        exec: (command, execOptions) =>
          execInDocker(command, execOptions, {
            container: config.container,
            toAgentPath,
            ...secrets,
          }),
        toAgentPath,
        toHostPath: createPathMapper([{ host: DOCKER_WORKSPACE, agent: home }]),
        toAgentText: createTextMapper([{ host: home, agent: DOCKER_WORKSPACE }]),
      };
    }
  }
}

function threadOf(options: SandboxOptions, kind: string): { home: string; threadId: string } {
  if (options.home === undefined || options.threadId === undefined) {
    throw new Error(`createSandbox: a ${kind} sandbox needs the home and the thread id`);
  }
  return { home: options.home, threadId: options.threadId };
}

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

/**
 * A translator of text (a tool's result or error) for such a sandbox: every host path under a
 * mapped prefix is shown as the agent sees it.
 */
export function createTextMapper(mappings: readonly PathMapping[]): (text: string) => string {
  const ordered = [...mappings]
    .map(({ host, agent }) => ({
      host: host.endsWith(sep) ? host.slice(0, -1) : host,
      agent: agent.replace(/\/$/, ""),
    }))
    .sort((a, b) => b.host.length - a.host.length);
  if (ordered.length === 0) return (text) => text;
  const pattern = new RegExp(
    `(${ordered.map(({ host }) => escapeRegExp(host)).join("|")})(?=[/\\s'"\`),;:\\]]|\\.(?:\\s|$)|$)`,
    "g",
  );
  return (text) =>
    text.replace(pattern, (host) => ordered.find((m) => m.host === host)?.agent ?? host);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * `tools` whose results and errors show host paths as the sandbox's commands see them (Docker's
 * /workspace): the file tools run in guppy's process, on host paths.
 */
export function withAgentPaths(tools: AgentTool[], sandbox: Sandbox): AgentTool[] {
  const map = sandbox.toAgentText;
  if (!map) return tools;
  const mapResult = <T>(result: AgentToolResult<T>): AgentToolResult<T> => ({
    ...result,
    content: result.content.map((part) =>
      part.type === "text" ? { ...part, text: map(part.text) } : part,
    ),
  });
  return tools.map((tool) => ({
    ...tool,
    async execute(id, params, signal, onUpdate) {
      try {
        const result = await tool.execute(
          id,
          params,
          signal,
          onUpdate ? (partial) => onUpdate(mapResult(partial)) : undefined,
        );
        return mapResult(result);
      } catch (error) {
        if (error instanceof Error) error.message = map(error.message);
        throw error;
      }
    },
  }));
}
