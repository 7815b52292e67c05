import { resolveHome } from "@guppy/core/config";
import { ExitCode } from "../cli/cli-error.js";
import { rejectExtraArguments } from "../cli/extra-arguments.js";
import type { CliArgs } from "../cli/parse-cli-args.js";
import { checkHome } from "./check-home.js";
import {
  type CheckLine,
  checkChannels,
  checkDisk,
  checkModel,
  checkNode,
  checkPermissions,
  checkPort,
  checkSandbox,
  checkSettings,
  formatCheck,
} from "./doctor-checks.js";

/**
 * `guppy doctor [--fix]`: one line per check, ✓ or ✗ with its fix — Node, the home's
 * permissions, settings, the model (a tiny request), each configured channel's token, the
 * sandbox, the HTTP port, the disk. Exit 0 when all hold, 1 otherwise. `--fix` repairs the
 * permissions first and says what it changed. The network checks run at once; the lines come
 * in their fixed order as each is known.
 */
export async function doctorCommand(args: CliArgs): Promise<number> {
  rejectExtraArguments(args, "guppy doctor");
  const home = resolveHome({ home: args.home });
  checkHome(home, args, false);
  const lines: Array<CheckLine | Promise<CheckLine>> = [
    checkNode(),
    checkPermissions(home, args.flags.fix === true),
  ];
  const { line, config } = checkSettings(args, home);
  lines.push(line);
  if (config) {
    lines.push(checkModel(config), ...checkChannels(config), checkSandbox(config));
    lines.push(checkPort(config));
  }
  lines.push(checkDisk(config?.home ?? home));
  let healthy = true;
  for (const pending of lines) {
    const check = await pending;
    if (!check.ok) healthy = false;
    process.stdout.write(`${formatCheck(check)}\n`);
  }
  return healthy ? ExitCode.ok : ExitCode.failed;
}
