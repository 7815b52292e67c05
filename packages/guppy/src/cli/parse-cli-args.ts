import { parseArgs } from "node:util";
import { booleanValue, closestName, kebab } from "@guppy/core/config";
import { allSettings } from "../channels/registry.js";
import { UsageError } from "./cli-error.js";

/** Every setting's key that has a flag, core's and guppy's (channels/registry.ts). */
const configKeys = Object.keys(allSettings).filter((key) => allSettings[key]?.env);

export interface CliArgs {
  command: string | undefined;
  positionals: string[];
  /** Config keys given as flags (--model, --max-tokens, ...). */
  configFlags: Partial<Record<string, string | boolean>>;
  home?: string;
  session?: string;
  /** A thread id `adapter:channel:thread` (guppy skills). */
  thread?: string;
  message?: string;
  /** `--owner`: admit as owner (guppy pairing approve, guppy invite create). */
  owner: boolean;
  /** `guppy events add`'s flags, mirroring the event file's fields (--thread and --timezone too). */
  eventFlags: Partial<Record<EventFlag, string>>;
  /** The command's own flags (`commandOptions`), by their names: `--fix` → `flags.fix`. */
  flags: Record<string, string | boolean>;
  help: boolean;
  version: boolean;
}

type Options = Record<string, { type: "string" | "boolean"; short?: string }>;

/** `guppy events` flags: --type --adapter --channel --text --schedule --id (only there). */
export const eventFlagNames = ["type", "adapter", "channel", "text", "schedule", "id"] as const;
export type EventFlag = (typeof eventFlagNames)[number];

const eventOptions: Options = Object.fromEntries(
  eventFlagNames.map((name) => [name, { type: "string" as const }]),
);

/**
 * Each command's own flags; anywhere else one is an unknown option like any other. A flag name
 * used by two commands has one type.
 */
export const commandOptions: Record<string, Options> = {
  events: eventOptions,
  pairing: { owner: { type: "boolean" } },
  invite: { owner: { type: "boolean" } },
  chat: { workspace: { type: "string" } },
  setup: {
    provider: { type: "string" },
    login: { type: "boolean" },
    "non-interactive": { type: "boolean" },
  },
  doctor: { fix: { type: "boolean" } },
  status: { json: { type: "boolean" } },
  usage: { days: { type: "string" }, by: { type: "string" }, json: { type: "boolean" } },
};

/** Boolean settings by flag name (`skills-inline` → skillsInline). */
const booleanFlags = new Map<string, string>(
  configKeys.filter((k) => typeof allSettings[k]?.default === "boolean").map((k) => [kebab(k), k]),
);

/** The options every command takes: home, session, thread, message, help, version and the settings. */
export function globalOptions(): Options {
  const options: Options = {
    home: { type: "string" },
    session: { type: "string" },
    thread: { type: "string" },
    message: { type: "string", short: "m" },
    help: { type: "boolean", short: "h" },
    version: { type: "boolean", short: "V" },
  };
  for (const key of configKeys) {
    if (!booleanFlags.has(kebab(key))) options[kebab(key)] = { type: "string" };
  }
  return options;
}

/**
 * Parses argv: a command, its positionals, and flags (every config key is also a --kebab-case
 * flag; a command's own flags are in `commandOptions`). A boolean setting's flag turns it on
 * (`--debug`), takes a value after "=" in any spelling the setting accepts (`--debug=false`,
 * `--debug=0`) or is negated (`--no-debug`), so a flag can override a `true` from the
 * environment or settings.json.
 */
export function parseCliArgs(argv: string[]): CliArgs {
  const options = globalOptions();
  const { rest, booleans } = takeBooleanFlags(argv, options);
  const strictParse = (known: Options, command?: string) => {
    try {
      return parseArgs({ args: rest, options: known, allowPositionals: true, strict: true });
    } catch (error) {
      const first = (error as Error).message.split("\n")[0] ?? "";
      const hint = unknownOptionHint(first, command);
      // With a hint, parseArgs' advice on positionals that start with "-" is beside the point.
      const line = hint ? `${first.slice(0, first.indexOf("'.") + 2)}${hint}` : first;
      throw new UsageError(`${line} (see guppy --help)`);
    }
  };
  const everyCommandOption: Options = Object.assign({}, ...Object.values(commandOptions));
  // The command as far as it can be told before the flags are known: a hint offers its flags.
  const guessed = parseArgs({
    args: rest,
    options: { ...options, ...everyCommandOption },
    allowPositionals: true,
    strict: false,
  }).positionals[0];
  const parsed = strictParse(
    { ...options, ...everyCommandOption },
    guessed !== undefined && Object.hasOwn(commandOptions, guessed) ? guessed : undefined,
  );
  const command = parsed.positionals[0];
  const own = (command !== undefined ? commandOptions[command] : undefined) ?? {};
  const values = parsed.values as Record<string, string | boolean | undefined>;
  // Parsed again with this command's flags alone, for parseArgs' own "Unknown option" line.
  const foreign = Object.keys(values).some((name) => !(name in options) && !(name in own));
  if (foreign) strictParse({ ...options, ...own }, command);
  const flags: Record<string, string | boolean> = {};
  for (const name of Object.keys(own)) {
    const v = values[name];
    if (v !== undefined) flags[name] = v;
  }
  const eventFlags: Partial<Record<EventFlag, string>> = {};
  for (const name of eventFlagNames) {
    const v = flags[name];
    if (command === "events" && typeof v === "string") eventFlags[name] = v;
  }
  const configFlags: Partial<Record<string, string | boolean>> = { ...booleans };
  for (const key of configKeys) {
    const v = values[kebab(key)];
    if (v !== undefined) configFlags[key] = v;
  }
  return {
    command,
    positionals: parsed.positionals.slice(1),
    configFlags,
    home: values.home as string | undefined,
    session: values.session as string | undefined,
    thread: values.thread as string | undefined,
    message: values.message as string | undefined,
    owner: flags.owner === true,
    eventFlags,
    flags,
    help: values.help === true,
    version: values.version === true,
  };
}

/**
 * What follows parseArgs' "Unknown option '--modle'." line: the closest flag `command` takes
 * (its own, the settings', --no-X of an on/off one), or the commands whose flag it is.
 */
function unknownOptionHint(message: string, command?: string): string {
  const name = /^Unknown option '--([^'=]+)'/.exec(message)?.[1];
  if (name === undefined) return "";
  const owners = Object.keys(commandOptions).filter((c) =>
    Object.hasOwn(commandOptions[c] ?? {}, name),
  );
  if (owners.length > 0 && command !== undefined && !owners.includes(command)) {
    return ` --${name} is an option of ${owners.map((c) => `guppy ${c}`).join(" and ")}, not of guppy ${command}.`;
  }
  const own = command !== undefined ? Object.keys(commandOptions[command] ?? {}) : [];
  const names = [
    ...Object.keys(globalOptions()),
    ...own,
    ...[...booleanFlags.keys()].flatMap((f) => [f, `no-${f}`]),
  ];
  const hint = closestName(name, names);
  return hint === undefined ? "" : ` Did you mean --${hint}?`;
}

/**
 * Takes the boolean settings' flags out of argv (node's parseArgs knows neither `--flag=VALUE`
 * for a boolean nor `--no-flag`); the last one of a setting wins. A value given as the next word
 * (`--debug false`) is refused rather than read as a command or argument. A string option's
 * value is never taken for a flag: the tokens come from parseArgs itself.
 */
function takeBooleanFlags(
  argv: string[],
  options: Options,
): { rest: string[]; booleans: Partial<Record<string, string | boolean>> } {
  const all: Options = { ...options };
  for (const name of booleanFlags.keys()) {
    all[name] = { type: "boolean" };
    all[`no-${name}`] = { type: "boolean" };
  }
  const { tokens } = parseArgs({
    args: argv,
    options: all,
    allowPositionals: true,
    strict: false,
    tokens: true,
  });
  const taken = new Set<number>();
  const booleans: Partial<Record<string, string | boolean>> = {};
  for (const [i, token] of tokens.entries()) {
    if (token.kind !== "option") continue;
    const negated = token.name.startsWith("no-");
    const key = booleanFlags.get(negated ? token.name.slice(3) : token.name);
    if (key === undefined || !token.rawName.startsWith("--")) continue;
    const name = kebab(key);
    if (negated) {
      if (token.inlineValue) {
        throw new UsageError(
          `--no-${name} takes no value (got "${token.rawName}=${token.value}"): write --no-${name} or --${name}=true|false`,
        );
      }
      booleans[key] = false;
    } else if (token.inlineValue) {
      booleans[key] = token.value ?? "";
    } else {
      const next = tokens[i + 1];
      if (
        next?.kind === "positional" &&
        next.index === token.index + 1 &&
        booleanValue(next.value).ok
      ) {
        throw new UsageError(
          `--${name} takes its value after "=": write --${name}=${next.value} (or --no-${name}), not "--${name} ${next.value}"`,
        );
      }
      booleans[key] = true;
    }
    taken.add(token.index);
  }
  return { rest: argv.filter((_, i) => !taken.has(i)), booleans };
}
