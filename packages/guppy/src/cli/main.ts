import { ExitCode, reportError, UsageError } from "./cli-error.js";
import { helpText } from "./help-text.js";
import { outputFailed } from "./output-errors.js";
import { type CliArgs, parseCliArgs } from "./parse-cli-args.js";
import { guppyVersion } from "./version.js";

/** Dispatches a command; each command module is loaded only when used. */
export async function main(argv: string[]): Promise<void> {
  // `guppy config | head` closes the pipe early: that is not an error worth a stack trace.
  for (const name of ["stdout", "stderr"] as const) {
    process[name].on("error", (error: NodeJS.ErrnoException) => outputFailed(name, error));
  }
  let code: number;
  let args: CliArgs | undefined;
  try {
    args = parseCliArgs(argv);
    if (args.help || args.command === "help") {
      process.stdout.write(helpText);
      code = ExitCode.ok;
    } else if (args.version || args.command === "version") {
      process.stdout.write(`guppy ${guppyVersion()}\n`);
      code = ExitCode.ok;
    } else if (args.command === undefined) {
      process.stdout.write(helpText);
      code = ExitCode.usage;
    } else {
      switch (args.command) {
        case "chat":
          code = await (await import("../commands/chat-command.js")).chatCommand(args);
          break;
        case "config":
          code = await (await import("../commands/config-command.js")).configCommand(args);
          break;
        case "serve":
          code = await (await import("../commands/serve-command.js")).serveCommand(args);
          break;
        case "init":
          code = await (await import("../commands/init-command.js")).initCommand(args);
          break;
        case "skills":
          code = await (await import("../commands/skills-command.js")).skillsCommand(args);
          break;
        case "events":
          code = await (await import("../commands/events-command.js")).eventsCommand(args);
          break;
        case "mcp":
          code = await (await import("../commands/mcp-command.js")).mcpCommand(args);
          break;
        case "pairing":
          code = await (await import("../commands/access-commands.js")).pairingCommand(args);
          break;
        case "invite":
          code = await (await import("../commands/access-commands.js")).inviteCommand(args);
          break;
        default:
          throw new UsageError(`unknown command "${args.command}" (see guppy --help)`);
      }
    }
  } catch (error) {
    code = reportError(error, args);
  }
  process.exitCode = code;
}
