import { dirname, join } from "node:path";
import { ENV_FILE } from "./env-file.js";
import { type ConfigSource, kebab } from "./load-config.js";
import { maskUrlCredentials } from "./mask-url-credentials.js";
import type { SettingDefinitions } from "./settings-schema.js";

/** Where the values of a configuration came from, and its settings (GuppyConfig has all three). */
export interface SettingOrigins {
  sources?: Partial<Record<string, ConfigSource>>;
  settingsPath?: string;
  /** `<home>/guppy.env` (default: beside settingsPath). */
  envFile?: { path: string };
  /** The settings `key` is one of (a folder's table, or the whole configuration's). */
  settings?: SettingDefinitions;
}

function definition(key: string, settings: SettingDefinitions | undefined) {
  const def = settings?.[key];
  if (!def) throw new Error(`No setting ${key}`);
  return def;
}

/**
 * A setting and its value as a message names them, by where the value came from:
 * `--api=openai-completions`, `GUPPY_API=openai-completions` or
 * `"api": "openai-completions" in /home/me/.guppy/settings.json` or
 * `GUPPY_API=openai-completions in /home/me/.guppy/guppy.env` (the environment variable when
 * the source is not known). A secret's value is never shown.
 */
export function settingWithValue(key: string, value: unknown, origins: SettingOrigins): string {
  const def = definition(key, origins.settings);
  const source = origins.sources?.[key];
  if (source === "settings") {
    const shown = def.secret ? "(secret)" : maskUrlCredentials(JSON.stringify(value));
    return `"${key}": ${shown} in ${origins.settingsPath ?? "settings.json"}`;
  }
  const shown = def.secret ? "(secret)" : maskUrlCredentials(String(value));
  if (source === "envFile") return `${def.env}=${shown} in ${envFilePath(origins)}`;
  return source === "flag" ? `--${kebab(key)}=${shown}` : `${def.env}=${shown}`;
}

/** Every place a setting can be given, for a message that asks for one: `GUPPY_BASE_URL (--base-url, "baseUrl" in settings.json)`. */
export function settingPlaces(key: string, settings?: SettingDefinitions): string {
  const def = definition(key, settings);
  if (!def.env) return `"${key}" in settings.json`;
  return `${def.env} (--${kebab(key)}, "${key}" in settings.json)`;
}

function envFilePath(origins: SettingOrigins): string {
  if (origins.envFile) return origins.envFile.path;
  return origins.settingsPath ? join(dirname(origins.settingsPath), ENV_FILE) : ENV_FILE;
}
