import { loadConfig } from "@guppy/core";
import { type AppConfig, checkToolChannels, guppySettings } from "../channels/registry.js";
import type { CliArgs } from "../cli/parse-cli-args.js";
import { checkHome } from "./check-home.js";

/**
 * Loads the configuration for a command (flags > env > settings.json > defaults), refuses a data
 * directory that is a file or a `tools` setting naming an unknown channel, and prints the configuration's warnings.
 */
export function loadCliConfig(args: CliArgs): AppConfig {
  const config = loadConfig({ flags: args.configFlags, home: args.home, settings: guppySettings });
  checkToolChannels(config);
  checkHome(config.home, args);
  for (const warning of config.warnings) process.stderr.write(`guppy: warning: ${warning}\n`);
  return config;
}
