import type { Sandbox } from "../sandbox/sandbox.js";

/** What the built-in tools need from the thread they run in. */
export interface ToolContext {
  /** The thread's workspace: relative paths resolve here, and bash starts here. */
  workspaceDir: string;
  /** Directory for saved full outputs (created on demand). */
  artifactsDir: () => string;
  sandbox: Sandbox;
  /** Longest tool output kept in context. */
  toolResultMaxChars: number;
  /** Default bash timeout. */
  bashTimeoutSeconds: number;
}
