import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { ConfigError } from "./config-error.js";
import { ENV_FILE, readEnvFile } from "./env-file.js";
import { maskUrlCredentials } from "./mask-url-credentials.js";
import { parseJsoncFile } from "./parse-jsonc-file.js";
import { closestName, isRawValue, type RawValue } from "./setting-parsers.js";
import type { SettingDefinition, SettingDefinitions, SettingValues } from "./settings-schema.js";

/**
 * Where a value came from: a flag, the real environment, `<home>/guppy.env` ("envFile"),
 * settings.json, the default, or nowhere.
 */
export type ConfigSource = "flag" | "env" | "envFile" | "settings" | "default" | "unset";

/** `<home>/guppy.env` as read: its path and its variables (all of them, not only guppy's). */
export interface LoadedEnvFile {
  path: string;
  values: Readonly<Record<string, string>>;
}

/** A configuration as read, beside its values (core's GuppyConfig, settings.ts, has them too). */
export interface LoadedConfig {
  /** GUPPY_HOME: the data directory. */
  home: string;
  homeSource: ConfigSource;
  settingsPath: string;
  /**
   * `<home>/guppy.env`, the one place for keys: read below the real environment and above
   * settings.json. Its other variables (ANTHROPIC_API_KEY, ...) are the app's to use.
   */
  envFile: LoadedEnvFile;
  /** Every setting read: core's and the app's (LoadConfigOptions.settings). */
  settings: SettingDefinitions;
  sources: Record<string, ConfigSource>;
  /** Non-fatal findings (unknown settings.json keys, guppy.env lines that are not KEY=value). */
  warnings: string[];
}

/** Where a configuration is read from (the table of settings aside). */
export interface ReadConfigOptions {
  /** The real environment (default process.env): it beats guppy.env. */
  env?: NodeJS.ProcessEnv;
  /** Command-line flags, already mapped to config keys. */
  flags?: Partial<Record<string, RawValue>>;
  /** --home flag. */
  home?: string;
}

// biome-ignore lint/complexity/noBannedTypes: no settings beyond core's
export interface LoadConfigOptions<S extends SettingDefinitions = {}> extends ReadConfigOptions {
  /**
   * The app's own settings (a chat channel's token, ...), read, checked and shown like core's;
   * a key or variable that core's schema has already is a programming error.
   */
  settings?: S;
}

/** The data directory: --home, else GUPPY_HOME, else ~/.guppy. Throws ConfigError for an empty --home. */
export function resolveHome(options: { home?: string; env?: NodeJS.ProcessEnv }): string {
  const env = options.env ?? process.env;
  if (options.home !== undefined && options.home.trim() === "") {
    // An empty path would resolve to the current directory, and guppy would write its files there.
    throw new ConfigError(
      `Invalid command-line option --home is ${JSON.stringify(options.home)}: expected a directory path.`,
    );
  }
  const raw = options.home ?? nonEmpty(env.GUPPY_HOME) ?? join(homedir(), ".guppy");
  const expanded = raw.startsWith("~/") || raw === "~" ? join(homedir(), raw.slice(1)) : raw;
  return isAbsolute(expanded) ? expanded : resolve(expanded);
}

/**
 * The values of `settings` (core's loadConfig passes its own and the app's). Precedence: flags >
 * environment > <home>/guppy.env > <home>/settings.json > defaults. The home itself comes only
 * from --home or the real GUPPY_HOME (guppy.env is found through it). Throws ConfigError.
 */
export function readConfig<S extends SettingDefinitions>(
  settings: S,
  options: ReadConfigOptions = {},
): LoadedConfig & SettingValues<S> {
  const env = options.env ?? process.env;
  const keys = Object.keys(settings);
  const home = resolveHome({ home: options.home, env });
  const settingsPath = join(home, "settings.json");
  const fileSettings = readSettingsFile(settingsPath);
  const envFile = readEnvFileOf(home);
  const warnings: string[] = [...envFile.problems];
  if (nonEmpty(envFile.values.GUPPY_HOME) !== undefined) {
    warnings.push(
      `GUPPY_HOME in ${envFile.path} is ignored: guppy.env is read from the data directory, so that comes only from --home or GUPPY_HOME in the environment.`,
    );
  }
  for (const key of Object.keys(fileSettings)) {
    if (key === "home") {
      warnings.push(
        `"home" in ${settingsPath} is ignored: settings.json is read from the data directory, so that comes only from --home or GUPPY_HOME.`,
      );
    } else if (!keys.includes(key) && !key.startsWith("$")) {
      const hint = closestName(key, keys);
      warnings.push(
        `Unknown key "${key}" in ${settingsPath}${hint ? ` (did you mean "${hint}"?)` : ""}; it is ignored.`,
      );
    }
  }

  const values: Record<string, unknown> = {};
  const sources: Record<string, ConfigSource> = {};
  for (const key of keys) {
    const read = settings[key] as SettingDefinition;
    const def = read.parserFor ? { ...read, parse: read.parserFor(fileSettings) } : read;
    // A settings.json-only setting (no variable) has no flag either.
    const flag = def.env ? options.flags?.[key] : undefined;
    const envRaw = def.env ? nonEmpty(env[def.env]) : undefined;
    const envFileRaw = def.env ? nonEmpty(envFile.values[def.env]) : undefined;
    const fileRaw = fileSettings[key];
    let source: ConfigSource;
    let raw: unknown;
    if (flag !== undefined) {
      source = "flag";
      raw = flag;
    } else if (envRaw !== undefined) {
      source = "env";
      raw = envRaw;
    } else if (envFileRaw !== undefined) {
      source = "envFile";
      raw = envFileRaw;
    } else if (fileRaw !== undefined && fileRaw !== null && fileRaw !== "") {
      source = "settings";
      raw = fileRaw;
    } else {
      sources[key] = def.default === undefined ? "unset" : "default";
      values[key] = def.default;
      continue;
    }
    const parsed =
      isRawValue(raw) || !def.env
        ? def.parse(raw)
        : def.parse.list && Array.isArray(raw) && raw.every(isRawValue)
          ? def.parse(raw.join(","))
          : { ok: false as const, expected: def.parse.expected };
    if (!parsed.ok && parsed.problem) {
      const where =
        source === "envFile"
          ? `Invalid variable ${def.env} in ${envFile.path}`
          : `Invalid setting in ${settingsPath}`;
      throw new ConfigError(`${where}: ${parsed.problem}`);
    }
    if (!parsed.ok) {
      throw new ConfigError(
        `${describeOrigin(key, def, source, settingsPath, envFile.path)} is ${describeValue(raw, def)}: expected ${parsed.expected}.`,
      );
    }
    values[key] = parsed.value;
    sources[key] = source;
  }

  const homeSource: ConfigSource =
    options.home !== undefined ? "flag" : nonEmpty(env.GUPPY_HOME) ? "env" : "default";
  return {
    ...(values as unknown as SettingValues<S>),
    home,
    homeSource,
    settingsPath,
    envFile: { path: envFile.path, values: envFile.values },
    settings,
    sources,
    warnings,
  };
}

function describeOrigin(
  key: string,
  def: SettingDefinition,
  source: ConfigSource,
  settingsPath: string,
  envFilePath: string,
): string {
  if (source === "flag") return `Invalid command-line option --${kebab(key)}`;
  if (source === "env") return `Invalid environment variable ${def.env}`;
  if (source === "envFile") return `Invalid variable ${def.env} in ${envFilePath}`;
  return `Invalid setting "${key}" in ${settingsPath}`;
}

/** A rejected value as an error shows it: in full, or for a secret only its kind (a blank one as is). */
function describeValue(raw: unknown, def: SettingDefinition): string {
  if (!def.secret || (typeof raw === "string" && raw.trim() === "")) {
    return maskUrlCredentials(JSON.stringify(raw));
  }
  const kind = Array.isArray(raw)
    ? "an array"
    : raw !== null && typeof raw === "object"
      ? "an object"
      : `a ${typeof raw}`;
  return `${kind} (a secret, not shown)`;
}

/** `<home>/guppy.env`; one that cannot be read is a ConfigError naming it. */
function readEnvFileOf(home: string): LoadedEnvFile & { problems: string[] } {
  const path = join(home, ENV_FILE);
  try {
    return { path, ...readEnvFile(path) };
  } catch (error) {
    throw new ConfigError(`Cannot read ${path}: ${(error as Error).message}`);
  }
}

function readSettingsFile(path: string): Record<string, unknown> {
  if (!existsSync(path)) return {};
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new ConfigError(`Cannot read ${path}: ${(error as Error).message}`);
  }
  const parsed = parseJsoncFile(path, text);
  if (parsed === undefined) return {};
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new ConfigError(`${path} must hold a JSON object of settings, like {"model": "..."}.`);
  }
  return parsed as Record<string, unknown>;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}

export function kebab(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** Rows for `guppy config`: every key with its effective value (secrets and URL passwords masked) and source. */
export function describeConfig(
  config: LoadedConfig,
): Array<{ key: string; env: string; value: string; source: ConfigSource }> {
  const rows = [{ key: "home", env: "GUPPY_HOME", value: config.home, source: config.homeSource }];
  for (const [key, def] of Object.entries(config.settings)) {
    const value = (config as unknown as Record<string, unknown>)[key];
    rows.push({
      key,
      env: def.env ?? "(settings.json)",
      value:
        value === undefined
          ? "(unset)"
          : def.secret
            ? maskSecret(String(value))
            : maskUrlCredentials(shownValue(value)),
      source: config.sources[key] ?? "unset",
    });
  }
  return rows;
}

function shownValue(value: unknown): string {
  if (Array.isArray(value)) return value.join(",");
  return value !== null && typeof value === "object" ? JSON.stringify(value) : String(value);
}

export function maskSecret(value: string): string {
  return value.length > 12 ? `${value.slice(0, 3)}…${value.slice(-2)} (masked)` : "****";
}
