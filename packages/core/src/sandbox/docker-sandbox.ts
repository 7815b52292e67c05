import { spawn } from "node:child_process";
import type { ExecOptions, ExecResult } from "./exec.js";
import { execTracked, toolEnv } from "./host-sandbox.js";
import type { PathTranslator } from "./types.js";

// Commands in a container the owner runs, through `docker exec`: guppy's home is mounted at
// /workspace there (the thread folders and memory, never the secrets: see docs), and each
// command starts in its thread's folder. The container confines every thread alike, not each
// thread apart.

/** Where the container mounts guppy's home (`<home>/X` is `/workspace/X` there). */
export const DOCKER_WORKSPACE = "/workspace";

export interface DockerOptions {
  container: string;
  toAgentPath: PathTranslator;
  modelProvider?: string;
  secretEnv?: readonly string[];
}

/**
 * Runs `command` with `docker exec -w <cwd there> -e GUPPY_EXEC_TAG=<tag> <container> bash -c`.
 * Killing the local `docker exec` client does not stop the command in the container: on timeout
 * or abort a second exec kills every process there whose environment has the command's tag.
 */
export function execInDocker(
  command: string,
  options: ExecOptions,
  docker: DockerOptions,
): Promise<ExecResult> {
  // The client's environment (DOCKER_HOST, ...) without guppy's secrets; the command in the
  // container gets the container's environment and the tag only.
  const env = toolEnv(options.env ?? process.env, docker.modelProvider, docker.secretEnv);
  return execTracked(options, (tag) => ({
    file: "docker",
    args: [
      "exec",
      "-w",
      docker.toAgentPath(options.cwd),
      "-e",
      `GUPPY_EXEC_TAG=${tag}`,
      docker.container,
      "bash",
      "-c",
      command,
    ],
    env,
    onKill: () => killInContainer(docker.container, tag, env),
  }));
}

/** `docker exec <container> sh -c <kill every process whose environment has the tag>`. */
function killInContainer(container: string, tag: string, env: NodeJS.ProcessEnv): void {
  const script = `for d in /proc/[0-9]*; do if tr '\\0' '\\n' < "$d/environ" 2>/dev/null | grep -qxF 'GUPPY_EXEC_TAG=${tag}'; then kill -9 "\${d#/proc/}" 2>/dev/null; fi; done; true`;
  const child = spawn("docker", ["exec", container, "sh", "-c", script], {
    env,
    stdio: "ignore",
  });
  child.on("error", () => {
    // No docker client any more: the local kill is all there is.
  });
  child.unref();
}
