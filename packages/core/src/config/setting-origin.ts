import { type ConfigSource, kebab } from "./load-config.js";
import { maskUrlCredentials } from "./mask-url-credentials.js";
import { type ConfigKey, type SettingDefinition, settingsSchema } from "./settings-schema.js";

/** Where the values of a configuration came from (GuppyConfig has both). */
export interface SettingOrigins {
  sources?: Partial<Record<ConfigKey, ConfigSource>>;
  settingsPath?: string;
}

/**
 * A setting and its value as a message names them, by where the value came from:
 * `--api=openai-completions`, `GUPPY_API=openai-completions` or
 * `"api": "openai-completions" in /home/me/.guppy/settings.json` (the environment variable when
 * the source is not known). A secret's value is never shown.
 */
export function settingWithValue(key: ConfigKey, value: unknown, origins: SettingOrigins): string {
  const def = settingsSchema[key] as SettingDefinition<ConfigKey>;
  const source = origins.sources?.[key];
  if (source === "settings") {
    const shown = def.secret ? "(secret)" : maskUrlCredentials(JSON.stringify(value));
    return `"${key}": ${shown} in ${origins.settingsPath ?? "settings.json"}`;
  }
  const shown = def.secret ? "(secret)" : maskUrlCredentials(String(value));
  return source === "flag" ? `--${kebab(key)}=${shown}` : `${def.env}=${shown}`;
}

/** Every place a setting can be given, for a message that asks for one: `GUPPY_BASE_URL (--base-url, "baseUrl" in settings.json)`. */
export function settingPlaces(key: ConfigKey): string {
  const def = settingsSchema[key] as SettingDefinition<ConfigKey>;
  return `${def.env} (--${kebab(key)}, "${key}" in settings.json)`;
}
