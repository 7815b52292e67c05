import { findEnvKeys, getProviders } from "@mariozechner/pi-ai";
import { secretEnvNames, settingsSchema } from "../config/settings-schema.js";
import { envKeyName } from "../model/resolve-model.js";

/** The variables of core's settings marked secret (GUPPY_API_KEY); an app names its own. */
const secretSettingVars: readonly string[] = secretEnvNames(settingsSchema);

/**
 * General-purpose tokens that pi-ai also reads as a provider's key (GH_TOKEN and GITHUB_TOKEN
 * for github-copilot, HF_TOKEN for huggingface). A user's own tools (gh, git, huggingface-cli)
 * use them too, so they are withheld only when the model comes from the provider that reads them.
 */
const sharedTokens = new Set(["GH_TOKEN", "GITHUB_TOKEN", "HF_TOKEN"]);

/**
 * Names of the variables in guppy's environment that hold secrets guppy itself consumes, which
 * the commands its tools run must not see (the model would, and the saved conversation): every
 * setting marked secret (core's, and `secretEnv`: an app's, such as a bot token), and every provider API-key variable pi-ai reads that is set — pi-ai
 * knows which (findEnvKeys looks in process.env) — plus the key variable guppy reads for the
 * model's provider on a custom endpoint (OLLAMA_API_KEY, ...).
 */
export function withheldEnvNames(
  modelProvider?: string,
  secretEnv: readonly string[] = [],
): Set<string> {
  const names = new Set([...secretSettingVars, ...secretEnv]);
  for (const provider of getProviders()) {
    for (const name of findEnvKeys(provider) ?? []) {
      if (!sharedTokens.has(name) || provider === modelProvider) names.add(name);
    }
  }
  if (modelProvider) names.add(envKeyName(modelProvider));
  return names;
}

/** `env` without the variables withheldEnvNames names. */
export function toolEnv(
  env: NodeJS.ProcessEnv,
  modelProvider?: string,
  secretEnv?: readonly string[],
): NodeJS.ProcessEnv {
  const withheld = withheldEnvNames(modelProvider, secretEnv);
  const kept: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) if (!withheld.has(name)) kept[name] = value;
  return kept;
}
