import {
  configuredSecrets,
  createRedactor,
  loadConfig,
  type Redactor,
  type ResolvedModel,
} from "@guppy/core";
import { kebab } from "@guppy/core/config";
import { API_TOKEN_FILE } from "../channels/http/api-token.js";
import { type AppConfig, checkToolChannels, guppySettings } from "../channels/registry.js";
import type { CliArgs } from "../cli/parse-cli-args.js";
import { checkHome } from "./check-home.js";
import { applyEnvFile, onLiveKeyChange, realEnvironment } from "./live-key.js";

/**
 * Loads the configuration for a command (flags > env > guppy.env > settings.json > defaults),
 * puts guppy.env's other variables (provider keys) into process.env where the environment has
 * none (live-key.ts), refuses a data directory that is a file or a `tools` setting naming an
 * unknown channel, and prints the configuration's warnings.
 */
export function loadCliConfig(args: CliArgs): AppConfig {
  const config = loadConfig({
    env: realEnvironment(),
    flags: args.configFlags,
    home: args.home,
    settings: guppySettings,
  });
  applyEnvFile(config.envFile.values);
  checkToolChannels(config);
  checkHome(config.home, args);
  for (const warning of config.warnings) process.stderr.write(`guppy: warning: ${warning}\n`);
  const exposed = secretFlagsWarning(args, config);
  if (exposed) process.stderr.write(`guppy: warning: ${exposed}\n`);
  return config;
}

/**
 * One line when secrets were given as flags (`--api-key`, `--api-token`, a bot token): every
 * user of the machine sees a process's arguments (`ps`) for as long as it runs.
 */
export function secretFlagsWarning(args: CliArgs, config: AppConfig): string | undefined {
  const secret = Object.keys(args.configFlags).filter((key) => config.settings[key]?.secret);
  if (secret.length === 0) return undefined;
  const flags = secret.map((key) => `--${kebab(key)}`).join(", ");
  const vars = secret.map((key) => config.settings[key]?.env ?? key).join(", ");
  return `${flags} can be read by anyone on this machine (ps) while guppy runs: set ${vars} as KEY=value lines in ${config.envFile.path} (chmod 600; every guppy command reads it, a running gateway follows it), in the environment, or in settings.json instead.`;
}

/**
 * The one redactor of a command that runs agents (`guppy serve`, a `guppy chat` running its
 * thread itself), shared by its logger, store and runners: every secret setting, the model's key
 * and the provider key variables — a custom endpoint's <PROVIDER>_API_KEY among them, known only
 * once the model is resolved — the HTTP API's token when there is one, a sign-in's tokens, and
 * a key guppy.env gives later (live-key.ts), from the request that first uses it.
 */
export function createCliRedactor(
  config: AppConfig,
  resolved: ResolvedModel,
  apiToken: string | undefined,
): Redactor {
  const redactor = createRedactor(
    [
      ...configuredSecrets(config, resolved),
      ...(apiToken ? [{ name: API_TOKEN_FILE, value: apiToken }] : []),
    ],
    // A subscription's tokens, new ones too as they are refreshed (auth.json).
    resolved.oauth?.secrets,
  );
  onLiveKeyChange(resolved, (secrets) => {
    for (const secret of secrets) redactor.add(secret);
  });
  return redactor;
}
