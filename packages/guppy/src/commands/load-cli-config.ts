import { type GuppyConfig, loadConfig } from "@guppy/core";
import type { CliArgs } from "../cli/parse-cli-args.js";

/** Loads the configuration for a command (flags > env > settings.json > defaults) and prints its warnings. */
export function loadCliConfig(args: CliArgs): GuppyConfig {
  const config = loadConfig({ flags: args.configFlags, home: args.home });
  for (const warning of config.warnings) process.stderr.write(`guppy: warning: ${warning}\n`);
  return config;
}
