import { mkdirSync } from "node:fs";
import type { AgentTool } from "@mariozechner/pi-agent-core";
import { type Static, Type } from "typebox";
import { trimTrailingNewlines } from "../runner/message-text.js";
import { MAX_BASH_TIMEOUT_SECONDS } from "./bash-timeout.js";
import { artifactPath, overflowExcerpt, spillOutput } from "./spill-output.js";
import type { ToolContext } from "./tool-context.js";
import { textResult } from "./tool-context.js";

const parameters = Type.Object({
  command: Type.String({ description: "The shell command to run (bash -c)" }),
  timeout_seconds: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_BASH_TIMEOUT_SECONDS,
      description: `Timeout in seconds (default 120, at most ${MAX_BASH_TIMEOUT_SECONDS} = 24 h)`,
    }),
  ),
});

export interface BashDetails {
  exitCode: number | null;
  timedOut: boolean;
  fullOutputPath?: string;
}

/**
 * `bash`: runs a command in the thread's workspace. Returns combined stdout+stderr and the exit
 * code; the whole process tree is killed on timeout or abort; long output is cut to a head+tail
 * excerpt and saved in full to a file whose path is given. A non-zero exit, a timeout or an
 * abort is reported as a tool error (the model sees the output either way).
 */
export function createBashTool(ctx: ToolContext): AgentTool<typeof parameters, BashDetails> {
  return {
    name: "bash",
    label: "bash",
    description:
      "Run a shell command (bash -c) in the workspace directory. Returns combined stdout and stderr and the exit code. " +
      "Long output is shortened and saved to a file you can read. Default timeout 120 s; set timeout_seconds for long jobs.",
    parameters,
    async execute(_id, params: Static<typeof parameters>, signal, onUpdate) {
      const timeoutSeconds = params.timeout_seconds ?? ctx.bashTimeoutSeconds;
      // The schema says so too; this holds for callers that skip its validation.
      if (
        !Number.isInteger(timeoutSeconds) ||
        timeoutSeconds < 1 ||
        timeoutSeconds > MAX_BASH_TIMEOUT_SECONDS
      ) {
        throw new Error(
          `timeout_seconds ${timeoutSeconds} is out of range: give a whole number of seconds from 1 to ${MAX_BASH_TIMEOUT_SECONDS} (24 h). The command was not run.`,
        );
      }
      let streamed = "";
      // The workspace is made on first use, not when a thread is created.
      mkdirSync(ctx.workspaceDir, { recursive: true });
      const result = await ctx.sandbox.exec(params.command, {
        cwd: ctx.workspaceDir,
        timeoutMs: timeoutSeconds * 1000,
        signal,
        onOutput: onUpdate
          ? (chunk) => {
              streamed = (streamed + chunk).slice(-2000);
              onUpdate(textResult(streamed, { exitCode: null, timedOut: false }));
            }
          : undefined,
        // An output too long for memory goes to its file as it comes, from its start.
        spillTo: () => artifactPath(ctx.artifactsDir(), "bash"),
      });
      // Redacted before it is cut to an excerpt: the tool-result hook redacts whole values
      // only, and a cut through a key would leave its halves in the context.
      const spilled = result.overflow
        ? overflowExcerpt(result.output, result.overflow, ctx.toolResultMaxChars, ctx.redactor)
        : spillOutput({
            text: result.output,
            maxChars: ctx.toolResultMaxChars,
            dir: ctx.artifactsDir,
            label: "bash",
            ...(ctx.redactor ? { redactor: ctx.redactor } : {}),
          });
      const details: BashDetails = {
        exitCode: result.exitCode,
        timedOut: result.timedOut,
        ...(spilled.path ? { fullOutputPath: spilled.path } : {}),
      };
      const trimmed = trimTrailingNewlines(spilled.text);
      const body = trimmed === "" ? "(no output)" : trimmed;
      if (result.aborted)
        throw new Error(`${body}\n\n[Command aborted; its process tree was killed.]`);
      if (result.timedOut) {
        throw new Error(
          `${body}\n\n[Command timed out after ${timeoutSeconds} s; its process tree was killed.]`,
        );
      }
      const status =
        result.exitCode === null ? `killed by ${result.signal}` : `exit code ${result.exitCode}`;
      if (result.exitCode !== 0) throw new Error(`${body}\n\n[${status}]`);
      return textResult(`${body}\n\n[${status}]`, details);
    },
  };
}
