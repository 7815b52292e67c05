import { parseArgs } from "node:util";
import { type ConfigKey, configKeys, kebab, settingsSchema } from "@guppy/core";
import { UsageError } from "./cli-error.js";

export interface CliArgs {
  command: string | undefined;
  positionals: string[];
  /** Config keys given as flags (--model, --max-tokens, ...). */
  configFlags: Partial<Record<ConfigKey, string | boolean>>;
  home?: string;
  session?: string;
  /** A thread id `adapter:channel:thread` (guppy skills). */
  thread?: string;
  message?: string;
  help: boolean;
}

const booleanKeys = new Set<ConfigKey>(
  configKeys.filter((k) => typeof settingsSchema[k].default === "boolean"),
);

/** Parses argv: a command, its positionals, and flags (every config key is also a --kebab-case flag). */
export function parseCliArgs(argv: string[]): CliArgs {
  const options: Record<string, { type: "string" | "boolean"; short?: string }> = {
    home: { type: "string" },
    session: { type: "string" },
    thread: { type: "string" },
    message: { type: "string", short: "m" },
    help: { type: "boolean", short: "h" },
  };
  for (const key of configKeys) {
    options[kebab(key)] = { type: booleanKeys.has(key) ? "boolean" : "string" };
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(`${(error as Error).message.split("\n")[0]} (see guppy --help)`);
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  const configFlags: Partial<Record<ConfigKey, string | boolean>> = {};
  for (const key of configKeys) {
    const v = values[kebab(key)];
    if (v !== undefined) configFlags[key] = v;
  }
  const [command, ...positionals] = parsed.positionals;
  return {
    command,
    positionals,
    configFlags,
    home: values.home as string | undefined,
    session: values.session as string | undefined,
    thread: values.thread as string | undefined,
    message: values.message as string | undefined,
    help: values.help === true,
  };
}
