import { type GuppyConfig, isConfigError } from "@guppy/core";
import { describeSandbox, resolveSandbox } from "@guppy/core/sandbox";

/**
 * `guppy config`'s sandbox line: where the tools would run, as `guppy serve` and `guppy chat`
 * resolve it at start (with `auto`'s notice when it falls back to the host). A sandbox that cannot
 * work is printed as its one-line error, not thrown: `guppy config` is where a user looks to see
 * what is wrong.
 */
export function sandboxLines(config: GuppyConfig, env: NodeJS.ProcessEnv = process.env): string[] {
  try {
    const { sandbox, notice } = resolveSandbox(config, { env });
    return [`sandbox: ${describeSandbox(sandbox)}`, ...(notice ? [`  ${notice}`] : [])];
  } catch (error) {
    if (isConfigError(error)) return [`sandbox: ${error.message}`];
    throw error;
  }
}
