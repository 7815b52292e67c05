import type { ExecOptions, ExecResult } from "./exec.js";

// The sandbox's vocabulary, shared by its kinds (bwrap-sandbox.ts, docker-sandbox.ts) and the
// thread view; sandbox.ts builds one of them.

/** A kind of sandbox and its settings: a new kind is one member here and one case in createSandbox. */
export type SandboxConfig =
  | { type: "host" }
  | { type: "bwrap"; mounts: readonly SandboxMount[]; network: boolean }
  | { type: "docker"; container: string };

/** An extra folder bubblewrap shows the tools (GUPPY_SANDBOX_MOUNTS), at its own path. */
export interface SandboxMount {
  path: string;
  access: "ro" | "rw";
}

/**
 * What the sandbox withholds from commands: the keys of the model's provider (even general ones
 * such as GITHUB_TOKEN) and the variables of the app's secret settings (a bot token).
 */
export interface HostSandboxOptions {
  modelProvider?: string;
  secretEnv?: readonly string[];
}

/** What one thread's sandbox is built from: the secrets it withholds, and whose thread it is. */
export interface SandboxOptions extends HostSandboxOptions {
  /** GUPPY_HOME (bwrap and docker). */
  home?: string;
  /** The thread the sandbox runs commands for (bwrap and docker). */
  threadId?: string;
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
  /** A path the agent gave, as a host path (the inverse of toAgentPath; absent: identity). */
  readonly toHostPath?: PathTranslator;
  /** A tool's result or error text with host paths shown as the agent sees them (absent: as is). */
  readonly toAgentText?: (text: string) => string;
}

/** Maps a host path to the path the agent's tools see (the sandbox decides). */
export type PathTranslator = (hostPath: string) => string;
