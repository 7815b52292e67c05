import { existsSync } from "node:fs";
import {
  type ConfigSource,
  discoverLocalModel,
  envKeyName,
  type GuppyConfig,
  localServers,
} from "@guppy/core";
import { describeConfig, maskSecret } from "@guppy/core/config";
import { builtinToolNames, roles, toolNamesFor } from "@guppy/core/tools";
import { findEnvKeys, getProviders } from "@mariozechner/pi-ai";
import { type AppConfig, TERMINAL_ADAPTER, threadAdapters } from "../channels/registry.js";
import { ExitCode } from "../cli/cli-error.js";
import { rejectExtraArguments } from "../cli/extra-arguments.js";
import type { CliArgs } from "../cli/parse-cli-args.js";
import { sandboxLines } from "./config-sandbox.js";
import { realEnvironment } from "./live-key.js";
import { loadCliConfig } from "./load-cli-config.js";
import { signInLines } from "./login-command.js";

/**
 * `guppy config`: every key, its effective value (secrets masked) and where it came from; the
 * subscriptions signed in to (auth.json, tokens masked), where the tools run (the sandbox) and
 * which tools each channel and role is offered; then the files read (settings.json, guppy.env),
 * the provider key variables set (masked) and the local server that answers.
 */
export async function configCommand(args: CliArgs): Promise<number> {
  rejectExtraArguments(args, "guppy config");
  const config = loadCliConfig(args);
  // Asked at once, answered (or timed out) while the rest is put together.
  const local = discoverLocalModel(localServers, 400).catch(() => undefined);
  const rows = describeConfig(config);
  const keyWidth = Math.max(...rows.map((r) => r.key.length));
  const envWidth = Math.max(...rows.map((r) => r.env.length));
  for (const row of rows) {
    process.stdout.write(
      `${row.key.padEnd(keyWidth)}  ${row.env.padEnd(envWidth)}  ${row.value}  (${sourceLabel(row.source)})\n`,
    );
  }
  for (const line of signInLines(config.home)) process.stdout.write(`${line}\n`);
  for (const line of sandboxLines(config)) process.stdout.write(`${line}\n`);
  for (const line of toolSetLines(config)) process.stdout.write(`${line}\n`);
  for (const line of fileLines(config)) process.stdout.write(`${line}\n`);
  for (const line of providerKeyLines(config)) process.stdout.write(`${line}\n`);
  const found = await local;
  process.stdout.write(
    found
      ? `local server: ${serverName(found.provider)} at ${found.baseUrl} (model ${found.modelId})\n`
      : `local server: none answering (${localServers.map((s) => `${s.name} ${s.baseUrl}`).join(", ")})\n`,
  );
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

/** A value's source as `guppy config` shows it: `(flag)`, `(env)`, `(guppy.env)`, `(settings)`, ... */
export function sourceLabel(source: ConfigSource): string {
  return source === "envFile" ? "guppy.env" : source;
}

/** The two files the configuration is read from, and whether they are there. */
function fileLines(config: GuppyConfig): string[] {
  const count = Object.keys(config.envFile.values).length;
  return [
    `settings.json: ${config.settingsPath}${existsSync(config.settingsPath) ? "" : " (not found)"}`,
    `guppy.env: ${config.envFile.path}${
      existsSync(config.envFile.path)
        ? ` (${count} variable${count === 1 ? "" : "s"})`
        : " (not found)"
    }`,
  ];
}

/**
 * The provider key variables pi-ai reads (and the custom endpoint's <PROVIDER>_API_KEY) that are
 * set, masked, with where each came from: `ANTHROPIC_API_KEY  sk-…f3 (masked)  (guppy.env)`.
 */
export function providerKeyLines(
  config: GuppyConfig,
  env: NodeJS.ProcessEnv = process.env,
  real: NodeJS.ProcessEnv = realEnvironment(),
): string[] {
  const names = new Set<string>();
  for (const provider of getProviders()) {
    for (const name of findEnvKeys(provider) ?? []) names.add(name);
  }
  const model = config.model;
  if (model) names.add(envKeyName(model.slice(0, model.indexOf("/"))));
  const set = [...names].filter((name) => present(env[name])).sort();
  if (set.length === 0) return ["provider keys: none set"];
  const width = Math.max(...set.map((name) => name.length));
  return [
    "provider keys:",
    ...set.map((name) => {
      const source = present(real[name]) ? "env" : "guppy.env";
      return `  ${name.padEnd(width)}  ${maskSecret(env[name] as string)}  (${source})`;
    }),
  ];
}

function present(value: string | undefined): boolean {
  return value !== undefined && value.trim() !== "";
}

function serverName(provider: string): string {
  return localServers.find((s) => s.provider === provider)?.name ?? provider;
}
