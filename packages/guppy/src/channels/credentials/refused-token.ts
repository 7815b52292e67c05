import { ConfigError, type ConfigKey, type GuppyConfig, kebab, settingsSchema } from "@guppy/core";

/** How the user gave setting `key`: its environment variable, settings.json key or flag. */
export function settingName(config: GuppyConfig, key: ConfigKey): string {
  const source = config.sources[key];
  if (source === "settings") return `"${key}" in ${config.settingsPath}`;
  if (source === "flag") return `--${kebab(key)}`;
  return settingsSchema[key].env;
}

/**
 * A chat platform refusing a token when its channel starts, as a one-line configuration error
 * (`guppy serve` exits 2) that names the setting: "Telegram refused the bot token
 * (TELEGRAM_BOT_TOKEN): 401 Unauthorized".
 */
export function refusedToken(
  config: GuppyConfig,
  key: ConfigKey,
  what: string,
  detail: string,
): ConfigError {
  const platform = key.startsWith("telegram")
    ? "Telegram"
    : key.startsWith("slack")
      ? "Slack"
      : "Discord";
  return new ConfigError(
    `${platform} refused the ${what} (${settingName(config, key)}): ${detail}`,
  );
}
