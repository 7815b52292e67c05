// @guppy/core/config: setting definitions, value parsers and the helpers the CLI's config commands
// use (loadConfig, core's settingsSchema, withAppSettings and ConfigError are in the package root).

export {
  ENV_FILE,
  type EnvFile,
  parseEnvText,
  readEnvFile,
  setEnvFileValues,
} from "./env-file.js";
export {
  describeConfig,
  kebab,
  type LoadedEnvFile,
  maskSecret,
  resolveHome,
} from "./load-config.js";
export { maskUrlCredentials } from "./mask-url-credentials.js";
export { parseJsoncFile } from "./parse-jsonc-file.js";
export {
  booleanValue,
  closestName,
  hostValue,
  integerValue,
  listValue,
  oneOf,
  type Parser,
  stringValue,
  tokenValue,
  urlValue,
} from "./setting-parsers.js";
export {
  MIN_CONTEXT_WINDOW,
  type SettingDefinition,
  type SettingDefinitions,
  type SettingValues,
  secretEnvNames,
  type WireApi,
  wireApis,
} from "./settings-schema.js";
export { settingsTable } from "./settings-table.js";
