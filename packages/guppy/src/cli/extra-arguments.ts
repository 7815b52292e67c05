import { UsageError } from "./cli-error.js";
import type { CliArgs } from "./parse-cli-args.js";

/**
 * Refuses words after a command beyond the `taken` it uses, in one line (exit 2), rather than
 * dropping them: `usage` is the command as it should be written, `hint` what was probably meant.
 */
export function rejectExtraArguments(
  args: CliArgs,
  usage: string,
  taken = 0,
  hint = "see guppy --help",
): void {
  const extra = args.positionals.slice(taken);
  if (extra.length === 0) return;
  const got = JSON.stringify(extra.join(" "));
  throw new UsageError(
    taken === 0
      ? `${usage} takes no arguments (got ${got}); ${hint}`
      : `unexpected argument${extra.length > 1 ? "s" : ""} ${got} (usage: ${usage})`,
  );
}
