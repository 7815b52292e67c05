import { isConfigError, type LoadConfigOptions, loadConfig } from "@guppy/core";
import { guppySettings } from "../channels/registry.js";

/** What `reportError` reads of the parsed arguments (the CLI's `CliArgs` has them). */
interface DebugFlags {
  configFlags?: LoadConfigOptions["flags"];
  home?: string;
}

/** Exit codes: 1 = the run failed, 2 = a usage or configuration mistake, 130 = interrupted. */
export const ExitCode = { ok: 0, failed: 1, usage: 2, interrupted: 130 } as const;

/** A mistake in how guppy was called: printed as one line, no stack trace. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/**
 * Prints an error as one line on stderr and returns the exit code it deserves. An unexpected
 * error also gets its stack trace when the `debug` setting is on for this call.
 */
export function reportError(error: unknown, args?: DebugFlags): number {
  if (isConfigError(error) || error instanceof UsageError) {
    process.stderr.write(`guppy: ${error.message}\n`);
    return ExitCode.usage;
  }
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`guppy: ${message}\n`);
  if (error instanceof Error && error.stack && debugOn(args)) {
    process.stderr.write(`${error.stack}\n`);
  }
  return ExitCode.failed;
}

/**
 * The effective `debug` setting, read as the commands read it (--debug / --no-debug, then
 * GUPPY_DEBUG, then settings.json): "false", "0" or "no" is off. Off when the settings cannot be
 * read (that error is the one reported, and it is a one-liner anyway).
 */
function debugOn(args: DebugFlags | undefined): boolean {
  try {
    return loadConfig({ flags: args?.configFlags, home: args?.home, settings: guppySettings })
      .debug;
  } catch {
    return false;
  }
}
