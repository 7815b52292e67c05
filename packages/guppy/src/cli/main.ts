import { closestName } from "@guppy/core/config";
import { makeFilesPrivate } from "@guppy/core/fs";
import { ExitCode, reportError, UsageError } from "./cli-error.js";
import { commandHelpText, helpText } from "./help-text.js";
import { outputFailed } from "./output-errors.js";
import { type CliArgs, parseCliArgs } from "./parse-cli-args.js";
import { guppyVersion } from "./version.js";

type Command = (args: CliArgs) => Promise<number>;

/** Every command, loaded only when used: one line each. */
export const commands: Record<string, Command> = {
  setup: async (a) => (await import("../commands/setup-command.js")).setupCommand(a),
  chat: async (a) => (await import("../commands/chat-command.js")).chatCommand(a),
  config: async (a) => (await import("../commands/config-command.js")).configCommand(a),
  serve: async (a) => (await import("../commands/serve-command.js")).serveCommand(a),
  init: async (a) => (await import("../commands/init-command.js")).initCommand(a),
  skills: async (a) => (await import("../commands/skills-command.js")).skillsCommand(a),
  events: async (a) => (await import("../commands/events-command.js")).eventsCommand(a),
  mcp: async (a) => (await import("../commands/mcp-command.js")).mcpCommand(a),
  pairing: async (a) => (await import("../commands/access-commands.js")).pairingCommand(a),
  invite: async (a) => (await import("../commands/access-commands.js")).inviteCommand(a),
  login: async (a) => (await import("../commands/login-command.js")).loginCommand(a),
  logout: async (a) => (await import("../commands/login-command.js")).logoutCommand(a),
  doctor: async (a) => (await import("../commands/doctor-command.js")).doctorCommand(a),
  usage: async (a) => (await import("../commands/usage-command.js")).usageCommand(a),
  status: async (a) => (await import("../commands/status-command.js")).statusCommand(a),
};

/** Dispatches a command; each command module is loaded only when used. */
export async function main(argv: string[]): Promise<void> {
  makeFilesPrivate(); // every file guppy writes is 600, every directory 700 (docs: permissions)
  // `guppy config | head` closes the pipe early: that is not an error worth a stack trace.
  for (const name of ["stdout", "stderr"] as const) {
    process[name].on("error", (error: NodeJS.ErrnoException) => outputFailed(name, error));
  }
  let code: number;
  let args: CliArgs | undefined;
  try {
    args = parseCliArgs(argv);
    if (args.help || args.command === "help") {
      const topic = args.command === "help" ? args.positionals[0] : args.command;
      process.stdout.write((topic !== undefined && commandHelpText(topic)) || helpText);
      code = ExitCode.ok;
    } else if (args.version || args.command === "version") {
      process.stdout.write(`guppy ${guppyVersion()}\n`);
      code = ExitCode.ok;
    } else if (args.command === undefined) {
      process.stdout.write(helpText);
      code = ExitCode.usage;
    } else {
      const run = Object.hasOwn(commands, args.command) ? commands[args.command] : undefined;
      if (!run) throw new UsageError(unknownCommand(args.command));
      code = await run(args);
    }
  } catch (error) {
    code = reportError(error, args);
  }
  process.exitCode = code;
}

/** `unknown command "chta" — did you mean "chat"?`, when one is close enough to be meant. */
function unknownCommand(name: string): string {
  const hint = closestName(name, [...Object.keys(commands), "help", "version"]);
  return `unknown command "${name}"${hint ? ` — did you mean "${hint}"?` : ""} (see guppy --help)`;
}
