import { readFileSync, statSync } from "node:fs";
import {
  ConfigError,
  configuredSecrets,
  type GuppyConfig,
  type ResolvedModel,
  resolveModel,
  type Secret,
} from "@guppy/core";
import { parseJsoncFile, readEnvFile, tokenValue } from "@guppy/core/config";

/**
 * `<home>/guppy.env` in this process. Its variables go into process.env for the names the real
 * environment lacks (pi-ai reads a provider's key, ANTHROPIC_API_KEY, ..., from process.env; an
 * MCP server's command may read any), as systemd's EnvironmentFile put them before; tools still
 * do not see the keys among them (the sandbox withholds provider key variables and secret
 * settings by name, whatever put them there). Which names this put, and with what value, is
 * kept, so that a second read of the configuration still ranks the real environment above the
 * file and a running gateway can follow the file.
 */
const injected = new Map<string, string>();

/** process.env as it was given to guppy: without the values guppy.env put there. */
export function realEnvironment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const [name, value] of injected) if (env[name] === value) delete env[name];
  return env;
}

/**
 * Puts guppy.env's variables (`values`) into process.env for the names the real environment
 * lacks (unset or blank, as loadConfig reads it), in place of those an earlier call put. Not
 * GUPPY_HOME: the file is found through the home, so it cannot move it (loadConfig warns).
 */
export function applyEnvFile(values: Readonly<Record<string, string>>): void {
  const real = realEnvironment();
  for (const [name, value] of injected) if (process.env[name] === value) delete process.env[name];
  injected.clear();
  for (const [name, value] of Object.entries(values)) {
    if (name === "GUPPY_HOME" || isSet(real[name]) || value.trim() === "") continue;
    process.env[name] = value;
    injected.set(name, value);
  }
}

const listeners = new WeakMap<ResolvedModel, Array<(secrets: Secret[]) => void>>();

/**
 * Calls `listener` with the secrets of the configuration each time a live key (withLiveKey)
 * re-reads guppy.env: the redactor adds the new key before the request that uses it is sent.
 * Nothing for a model without one.
 */
export function onLiveKeyChange(
  resolved: ResolvedModel,
  listener: (secrets: Secret[]) => void,
): void {
  listeners.get(resolved)?.push(listener);
}

/**
 * The model with a `getApiKey` that follows guppy.env, so that a key changed there is used by
 * the next request of a running gateway, no restart. At each request the file is stat'ed; only
 * when its size, mtime or inode changed is it read again and the key chosen as at start: the
 * flag, then the real environment, then guppy.env, then settings.json, for GUPPY_API_KEY, then
 * the provider's variable (ANTHROPIC_API_KEY, ...) — resolveModel's rules, asked again.
 *
 * Left as it is when the model has a getApiKey already (an OAuth sign-in refreshes its own) or
 * when its key is GUPPY_API_KEY from a flag or the real environment, which nothing changes.
 */
export function withLiveKey(resolved: ResolvedModel, config: GuppyConfig): ResolvedModel {
  const source = config.sources.apiKey;
  if (resolved.getApiKey || source === "flag" || source === "env") return resolved;
  const path = config.envFile.path;
  let seen = signature(path);
  let key = resolved.apiKey;
  const live: ResolvedModel = {
    ...resolved,
    getApiKey: () => {
      const now = signature(path);
      if (now === seen) return key;
      // A file that fails (a bad GUPPY_API_KEY, no key left) fails each request, saying why,
      // until it is fixed: never the old key in silence.
      return reload().then((next) => {
        seen = now;
        key = next.apiKey;
        for (const listener of listeners.get(live) ?? []) listener(next.secrets);
        return key;
      });
    },
  };
  listeners.set(live, []);

  /** settings.json's apiKey, read when guppy.env no longer gives GUPPY_API_KEY. */
  const settingsApiKey = (): string | undefined => {
    if (source === "settings") return config.apiKey;
    if (source !== "envFile") return undefined;
    let text: string;
    try {
      text = readFileSync(config.settingsPath, "utf8");
    } catch {
      return undefined;
    }
    const raw = (parseJsoncFile(config.settingsPath, text) as Record<string, unknown> | undefined)
      ?.apiKey;
    const parsed = raw === undefined ? undefined : tokenValue(raw);
    return parsed?.ok ? parsed.value : undefined;
  };

  const reload = async (): Promise<{ apiKey: string | undefined; secrets: Secret[] }> => {
    const file = readEnvFile(path);
    applyEnvFile(file.values);
    const fromFile = file.values.GUPPY_API_KEY;
    let apiKey: string | undefined;
    if (fromFile !== undefined && fromFile.trim() !== "") {
      const parsed = tokenValue(fromFile);
      if (!parsed.ok) {
        throw new ConfigError(
          `Invalid variable GUPPY_API_KEY in ${path} is a string (a secret, not shown): expected ${parsed.expected}.`,
        );
      }
      apiKey = parsed.value;
    } else {
      apiKey = settingsApiKey();
    }
    const model = resolved.model;
    const next = await resolveModel(
      { ...config, apiKey },
      {
        // The model found at start, not another one a local server now offers.
        discover: async () => ({
          provider: model.provider,
          baseUrl: model.baseUrl,
          modelId: model.id,
        }),
      },
    );
    const secrets = configuredSecrets({ ...config, apiKey }, next);
    return {
      apiKey: next.apiKey,
      secrets: secrets.filter((s, i) => secrets.findIndex((t) => t.value === s.value) === i),
    };
  };
  return live;
}

/** What tells a changed file: size, mtime and inode (an editor's rename makes a new one). */
function signature(path: string): string {
  try {
    const s = statSync(path);
    return `${s.size}:${s.mtimeMs}:${s.ino}`;
  } catch {
    return "none";
  }
}

function isSet(value: string | undefined): boolean {
  return value !== undefined && value.trim() !== "";
}
