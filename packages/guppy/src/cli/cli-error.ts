import { isConfigError } from "@guppy/core";

/** Exit codes: 1 = the run failed, 2 = a usage or configuration mistake, 130 = interrupted. */
export const ExitCode = { ok: 0, failed: 1, usage: 2, interrupted: 130 } as const;

/** A mistake in how guppy was called: printed as one line, no stack trace. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** Prints an error as one line on stderr and returns the exit code it deserves. */
export function reportError(error: unknown): number {
  if (isConfigError(error) || error instanceof UsageError) {
    process.stderr.write(`guppy: ${error.message}\n`);
    return ExitCode.usage;
  }
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`guppy: ${message}\n`);
  if (process.env.GUPPY_DEBUG && error instanceof Error && error.stack) {
    process.stderr.write(`${error.stack}\n`);
  }
  return ExitCode.failed;
}
