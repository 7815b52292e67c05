import {
  authFilePath,
  loadConfig,
  localServers,
  readAuthFile,
  resolveModel,
  signedInProviders,
} from "@guppy/core";
import { maskUrlCredentials, resolveHome } from "@guppy/core/config";
import { type AppConfig, guppySettings } from "../channels/registry.js";
import { checkBotToken } from "../channels/telegram/check-bot-token.js";
import { ExitCode, UsageError } from "../cli/cli-error.js";
import { rejectExtraArguments } from "../cli/extra-arguments.js";
import type { CliArgs } from "../cli/parse-cli-args.js";
import { AnswerCancelled, type Asker, createTerminalAsker } from "../terminal/ask.js";
import { checkHome } from "./check-home.js";
import { runLogin } from "./login-command.js";
import { probeModel } from "./probe-model.js";
import { chooseModel, type ModelChoice, type ModelQuestions } from "./setup-model.js";
import { CUSTOM } from "./setup-providers.js";
import { pairingSteps } from "./setup-telegram.js";
import {
  editSettingsFile,
  envFilePath,
  envFileValues,
  type SettingsChanges,
  settingsFileKeys,
  writeEnvValues,
} from "./setup-write.js";

/**
 * `guppy setup`: provider, model and key (and optionally a Telegram bot), checked with one tiny
 * request before anything is written; then settings.json (its comments and other keys kept) and
 * the key in guppy.env. Every question has a flag; with --non-interactive, or when stdin is not a
 * terminal, the flags (and keys already in the environment) are the answers.
 */
export async function setupCommand(args: CliArgs): Promise<number> {
  rejectExtraArguments(args, "guppy setup", 0, "its answers are flags: see guppy setup --help");
  const interactive = args.flags["non-interactive"] !== true && Boolean(process.stdin.isTTY);
  return (await runSetup(args, interactive ? createTerminalAsker() : undefined)).code;
}

export interface SetupResult {
  code: number;
  /**
   * The variables the setup's model and bot take from guppy.env, written now or there before: a
   * caller that goes on, as `guppy chat` does, puts them in its own environment.
   */
  env: Record<string, string>;
  /** guppy.env's variables before the setup (a value in the environment equal to one came from it). */
  envFileBefore: Record<string, string>;
}

/** The setup itself; `asker` undefined: non-interactive. */
export async function runSetup(args: CliArgs, asker: Asker | undefined): Promise<SetupResult> {
  const out = (text: string) => process.stdout.write(text);
  const home = resolveHome({ home: args.home });
  checkHome(home, args);
  // --model is read here, not as a setting: setup takes a bare id too (`--provider ollama --model llama3`).
  const { model: modelFlag, ...flags } = args.configFlags;
  const config = loadConfig({ flags, home: args.home, settings: guppySettings });
  for (const warning of config.warnings) process.stderr.write(`guppy: warning: ${warning}\n`);
  const envFile = envFileValues(home);
  const given = {
    provider: stringFlag(args.flags.provider)?.toLowerCase(),
    model: stringFlag(modelFlag),
    baseUrl: stringFlag(flags.baseUrl),
    api: stringFlag(flags.api),
    apiKey: stringFlag(flags.apiKey),
    login: args.flags.login === true,
  };
  const questions: ModelQuestions = {
    asker,
    out,
    given,
    envFile,
    envFileName: envFilePath(home),
    currentProvider: currentProvider(config),
  };
  try {
    const choice = await chooseAndTest(questions, config);
    if (!choice) return { code: ExitCode.failed, env: {}, envFileBefore: envFile };
    const bot = await chooseBot(args, config, asker, out);
    if (bot === false) return { code: ExitCode.failed, env: {}, envFileBefore: envFile };
    const written = save(home, choice, bot?.token, envFile, out);
    if (bot) out(`\n${pairingSteps(bot.username)}`);
    const kept =
      choice.keyFrom === "guppy.env" && choice.keyName && choice.key
        ? { [choice.keyName]: choice.key }
        : {};
    return { code: ExitCode.ok, env: { ...kept, ...written }, envFileBefore: envFile };
  } catch (error) {
    if (!(error instanceof AnswerCancelled)) throw error;
    out("guppy setup cancelled: nothing was written.\n");
    return { code: ExitCode.interrupted, env: {}, envFileBefore: envFile };
  }
}

/**
 * Asks (or takes from the flags) until a model answers the test request. Non-interactive, a
 * failed test ends the setup: undefined, after saying what failed.
 */
async function chooseAndTest(
  q: ModelQuestions,
  config: AppConfig,
): Promise<(ModelChoice & { provider: string }) | undefined> {
  for (;;) {
    const choice = await chooseModel(q);
    if (choice.signIn) await signIn(choice.signIn, config.home, q);
    const problem = await testModel(choice, config, q.out);
    if (!problem) return choice;
    if (!q.asker) {
      process.stderr.write(`guppy: the test request failed: ${problem}; nothing was written.\n`);
      return undefined;
    }
    q.out(`✗ ${problem}\nAgain (Enter keeps each answer):\n`);
    q.previous = choice;
  }
}

/**
 * A subscription's sign-in (`guppy login`'s flow) unless auth.json has one already; without a
 * terminal it must have been made before.
 */
async function signIn(provider: string, home: string, q: ModelQuestions): Promise<void> {
  if (signedInProviders(readAuthFile(home)).includes(provider)) {
    q.out(
      `signed in to ${provider} already (${authFilePath(home)}); guppy logout ${provider} ends it\n`,
    );
    return;
  }
  if (!q.asker) {
    throw new UsageError(
      `not signed in to ${provider}: run guppy login ${provider} first (it asks for a code from the browser), then guppy setup again`,
    );
  }
  await runLogin(provider, { home, input: process.stdin, output: process.stdout });
}

/** One tiny request to the chosen model: undefined when it answered, else what failed. */
async function testModel(
  choice: ModelChoice,
  config: AppConfig,
  out: (text: string) => void,
): Promise<string | undefined> {
  let resolved: Awaited<ReturnType<typeof resolveModel>>;
  try {
    resolved = await resolveModel(
      {
        ...config,
        model: choice.ref,
        baseUrl: choice.baseUrl,
        api: choice.api,
        apiKey: choice.key,
        home: config.home,
      },
      { env: {} },
    );
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  out(`Testing ${choice.ref} at ${maskUrlCredentials(resolved.model.baseUrl)} …\n`);
  const result = await probeModel(resolved);
  if (!result.ok) return result.problem;
  out(`✓ ${choice.ref} answered (${result.ms} ms)\n`);
  return undefined;
}

/**
 * A Telegram bot token: --telegram-bot-token, else asked (Enter skips). Checked with getMe;
 * undefined: no bot (or the configured one kept), false: the flag's token failed.
 */
async function chooseBot(
  args: CliArgs,
  config: AppConfig,
  asker: Asker | undefined,
  out: (text: string) => void,
): Promise<{ token: string; username: string } | undefined | false> {
  const flag = stringFlag(args.configFlags.telegramBotToken);
  let token = flag;
  for (;;) {
    if (token === undefined) {
      if (!asker) return undefined;
      const keeps = config.telegramBotToken ? "Enter keeps the current one" : "Enter skips";
      token = await asker.askHidden(
        `Telegram bot token from @BotFather, to talk to guppy in Telegram (not shown; ${keeps}): `,
      );
      if (token === "") return undefined;
    }
    const check = await checkBotToken(token, config.telegramApiUrl);
    if (check.ok) {
      out(`✓ Telegram bot @${check.username}\n`);
      return { token, username: check.username };
    }
    if (!asker) {
      process.stderr.write(`guppy: ${check.problem}; nothing was written.\n`);
      return false;
    }
    out(`✗ ${check.problem}\n`);
    token = undefined;
  }
}

/** Writes settings.json and guppy.env; returns what guppy.env got. */
function save(
  home: string,
  choice: ModelChoice & { provider: string },
  botToken: string | undefined,
  envFile: Record<string, string>,
  out: (text: string) => void,
): Record<string, string> {
  const env: Record<string, string> = {};
  if (choice.keyName && choice.key && envFile[choice.keyName] !== choice.key) {
    if (choice.keyFrom === "flag" || choice.keyFrom === "typed") env[choice.keyName] = choice.key;
  }
  // GUPPY_API_KEY is used before a provider's own variable: a custom endpoint's old key would be
  // sent to this provider. An empty value counts as unset.
  if (choice.keyName !== "GUPPY_API_KEY" && envFile.GUPPY_API_KEY) env.GUPPY_API_KEY = "";
  if (botToken && envFile.TELEGRAM_BOT_TOKEN !== botToken) env.TELEGRAM_BOT_TOKEN = botToken;

  const settings: SettingsChanges = { model: choice.ref, baseUrl: choice.baseUrl, api: choice.api };
  // settings.json's apiKey would be used before the key guppy.env now has (or none, locally).
  if (settingsFileKeys(home).includes("apiKey") && choice.key) settings.apiKey = undefined;
  const changed = editSettingsFile(home, settings);
  writeEnvValues(home, env);

  const settingsPath = `${home}/settings.json`;
  out(
    changed.length > 0
      ? `wrote ${settingsPath} (${changed.map((k) => (settings[k as keyof SettingsChanges] === undefined ? `removed ${k}` : k)).join(", ")})\n`
      : `kept  ${settingsPath} (already so)\n`,
  );
  const names = Object.keys(env);
  if (names.length > 0) {
    const shown = names.map((n) => (env[n] === "" ? `cleared ${n}` : n)).join(", ");
    out(`wrote ${envFilePath(home)} (${shown}; mode 600)\n`);
  } else if (choice.keyName && choice.key) {
    out(
      `key   ${choice.keyName} from ${choice.keyFrom === "guppy.env" ? envFilePath(home) : "the environment"}, left there\n`,
    );
  }
  warnOverrides(choice, env, envFile);
  return env;
}

/** The real environment comes before settings.json and guppy.env: say when it hides what was written. */
function warnOverrides(
  choice: ModelChoice,
  written: Record<string, string>,
  envFile: Record<string, string>,
): void {
  const wanted: Record<string, string | undefined> = {
    GUPPY_MODEL: choice.ref,
    GUPPY_BASE_URL: choice.baseUrl,
    GUPPY_API: choice.api,
    ...written,
  };
  for (const [name, value] of Object.entries(wanted)) {
    const now = process.env[name];
    // A value the environment has from guppy.env itself is the file's, not an override.
    if (!now || now === value || now === envFile[name]) continue;
    process.stderr.write(
      `guppy: warning: ${name} is set in the environment and is used before what setup wrote; unset it\n`,
    );
  }
}

/** The provider of the configured model, as the provider question names it. */
function currentProvider(config: AppConfig): string | undefined {
  if (!config.model) return undefined;
  const local = localServers.find((s) => s.baseUrl === config.baseUrl?.replace(/\/+$/, ""));
  if (local) return local.provider;
  return config.baseUrl ? CUSTOM : config.model.slice(0, config.model.indexOf("/"));
}

function stringFlag(value: string | boolean | undefined): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}
