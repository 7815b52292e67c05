import { describeConfig } from "@guppy/core/config";
import { builtinToolNames, roles, toolNamesFor } from "@guppy/core/tools";
import { type AppConfig, TERMINAL_ADAPTER, threadAdapters } from "../channels/registry.js";
import { ExitCode } from "../cli/cli-error.js";
import { rejectExtraArguments } from "../cli/extra-arguments.js";
import type { CliArgs } from "../cli/parse-cli-args.js";
import { sandboxLines } from "./config-sandbox.js";
import { loadCliConfig } from "./load-cli-config.js";
import { signInLines } from "./login-command.js";

/**
 * `guppy config`: every key, its effective value (secrets masked) and where it came from; then
 * the subscriptions signed in to (auth.json, tokens masked), where the tools run (the sandbox) and which tools each channel and role is offered.
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
  for (const line of signInLines(config.home)) process.stdout.write(`${line}\n`);
  for (const line of sandboxLines(config)) process.stdout.write(`${line}\n`);
  for (const line of toolSetLines(config)) process.stdout.write(`${line}\n`);
  return ExitCode.ok;
}

/**
 * The tools a run is offered on each channel for each role, after the `tools` setting:
 * `tools telegram guest: read`. A gateway channel's threads have `upload` (files back to the
 * chat); the terminal's do not.
 */
export function toolSetLines(config: AppConfig): string[] {
  return threadAdapters.flatMap((channel) => {
    const available = builtinToolNames.filter(
      (name) => name !== "upload" || channel !== TERMINAL_ADAPTER,
    );
    return roles.map((role) => {
      const names = toolNamesFor(config.tools, channel, role, available);
      return `tools ${channel} ${role}: ${names.length > 0 ? names.join(", ") : "(none)"}`;
    });
  });
}
