import { sep } from "node:path";

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
