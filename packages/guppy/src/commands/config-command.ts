import { describeConfig } from "@guppy/core/config";
import { ExitCode } from "../cli/cli-error.js";
import { rejectExtraArguments } from "../cli/extra-arguments.js";
import type { CliArgs } from "../cli/parse-cli-args.js";
import { sandboxLines } from "./config-sandbox.js";
import { loadCliConfig } from "./load-cli-config.js";

/**
 * `guppy config`: every key, its effective value (secrets masked) and where it came from; then
 * where the tools run (the sandbox).
 */
export async function configCommand(args: CliArgs): Promise<number> {
  rejectExtraArguments(args, "guppy config");
  const config = loadCliConfig(args);
  const rows = describeConfig(config);
  const keyWidth = Math.max(...rows.map((r) => r.key.length));
  const envWidth = Math.max(...rows.map((r) => r.env.length));
  for (const row of rows) {
    process.stdout.write(
      `${row.key.padEnd(keyWidth)}  ${row.env.padEnd(envWidth)}  ${row.value}  (${row.source})\n`,
    );
  }
  for (const line of sandboxLines(config)) process.stdout.write(`${line}\n`);
  return ExitCode.ok;
}
