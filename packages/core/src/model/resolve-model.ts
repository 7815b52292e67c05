import { type Api, getEnvApiKey, getModels, getProviders, type Model } from "@mariozechner/pi-ai";
import { getOAuthProvider } from "@mariozechner/pi-ai/oauth";
import { ConfigError } from "../config/config-error.js";
import type { LoadedConfig } from "../config/load-config.js";
import { type SettingOrigins, settingPlaces, settingWithValue } from "../config/setting-origin.js";
import { editDistance } from "../config/setting-parsers.js";
import type { WireApi } from "../config/settings-schema.js";
import { type ModelSettingValues, modelSettings } from "./model-settings.js";
import { type OAuthSession, openOAuthSession } from "./oauth-key.js";

export interface ResolvedModel {
  /** `provider/model-id` as configured (or discovered). */
  ref: string;
  model: Model<Api>;
  /** The key as resolved at start (redacted from logs and tool output). */
  apiKey?: string;
  /**
   * When set, asked for the key at each request instead (a key changed in guppy.env, an OAuth
   * token refreshed before it expires); `apiKey` is then its value at start.
   */
  getApiKey?: () => string | undefined | Promise<string | undefined>;
  /** The key is a subscription's sign-in (OAuth), not a pay-per-token key: usage shows no spend. */
  subscription?: boolean;
  /** The sign-in `getApiKey` reads (auth.json): its tokens are redacted, its failures logged. */
  oauth?: OAuthSession;
  /** Reply token limit to request. */
  maxTokens: number;
  /** True for a custom endpoint (GUPPY_BASE_URL) or a discovered local server. */
  custom: boolean;
}

/** Context window assumed for an uncatalogued model on a custom endpoint. */
export const DEFAULT_CUSTOM_CONTEXT_WINDOW = 32_768;
/** Reply limit used when neither the setting nor the catalog gives one. */
const DEFAULT_MAX_TOKENS = 8_192;
/** Cap on the catalog's reply limit, so one reply cannot reserve most of the window. */
const MAX_DEFAULT_REPLY = 16_384;

export const noModelMessage =
  "No model configured: set GUPPY_MODEL=provider/model-id (e.g. anthropic/claude-sonnet-4-5) and its API key " +
  "(ANTHROPIC_API_KEY, OPENAI_API_KEY, ... or GUPPY_API_KEY), or GUPPY_MODEL + GUPPY_BASE_URL + GUPPY_API for a custom endpoint; " +
  "no local Ollama (127.0.0.1:11434) or LM Studio (127.0.0.1:1234) answered.";

/** The model settings, and where they came from (for messages; the environment variable is named when not given). */
type ModelSettings = Pick<
  ModelSettingValues,
  "model" | "baseUrl" | "api" | "apiKey" | "maxTokens" | "contextWindow" | "modelCost"
> &
  Partial<Pick<LoadedConfig, "home">> &
  SettingOrigins;

/**
 * Turns configuration into a pi-ai Model. `provider/model-id` is looked up in pi-ai's catalog;
 * with GUPPY_BASE_URL the id is sent as is (catalogued or not) over GUPPY_API. With no model,
 * local servers are probed (unless `discover` is false). Throws ConfigError with one line.
 */
export async function resolveModel(
  given: ModelSettings,
  options: { env?: NodeJS.ProcessEnv; discover?: () => Promise<DiscoveredModel | undefined> } = {},
): Promise<ResolvedModel> {
  // Messages name a setting from the configuration's table, else from the model's own.
  const config = { ...given, settings: given.settings ?? modelSettings };
  const env = options.env ?? process.env;
  if (!config.model) {
    const found = await (options.discover ?? discoverLocalModel)();
    if (!found) throw new ConfigError(noModelMessage);
    return buildCustom(config, found.provider, found.modelId, found.baseUrl, "openai-completions");
  }
  const slash = config.model.indexOf("/");
  const provider = config.model.slice(0, slash);
  const modelId = config.model.slice(slash + 1);

  if (config.baseUrl) {
    const api =
      config.api ?? (provider === "anthropic" ? "anthropic-messages" : "openai-completions");
    return buildCustom(config, provider, modelId, config.baseUrl, api, env);
  }
  if (config.api) {
    throw new ConfigError(
      `${settingWithValue("api", config.api, config)} is set but no base URL is: the API setting only applies to a custom endpoint, given by ${settingPlaces("baseUrl", config.settings)}.`,
    );
  }

  const providers = getProviders() as string[];
  if (!providers.includes(provider)) {
    throw new ConfigError(
      `Unknown provider "${provider}" in ${settingWithValue("model", config.model, config)}: known providers are ${providers.join(", ")}; for any other server set GUPPY_BASE_URL and GUPPY_API.`,
    );
  }
  const catalogued = (getModels(provider as never) as Model<Api>[]).find((m) => m.id === modelId);
  if (!catalogued) {
    const ids = (getModels(provider as never) as Model<Api>[]).map((m) => m.id);
    const close = closestModelId(modelId, ids);
    const known = close
      ? `did you mean "${provider}/${close}"?`
      : `e.g. ${ids.slice(0, 5).join(", ")}`;
    throw new ConfigError(
      `Model "${modelId}" is not in pi-ai's catalog for ${provider} (${known}); to use it anyway set GUPPY_BASE_URL to the provider's endpoint.`,
    );
  }
  const model: Model<Api> = {
    ...catalogued,
    ...(config.contextWindow ? { contextWindow: config.contextWindow } : {}),
    ...(config.modelCost ? { cost: config.modelCost } : {}),
  };
  const oauth = signIn(config, provider, model);
  const apiKey = config.apiKey ?? oauth?.apiKey ?? getEnvApiKey(provider) ?? undefined;
  if (!apiKey) {
    throw new ConfigError(
      `No API key for ${provider}: set ${envKeyName(provider)} (or GUPPY_API_KEY) for ${settingWithValue("model", config.model, config)}${signInHint(provider)}.`,
    );
  }
  const maxTokens = replyLimit(
    config,
    model.contextWindow,
    `the catalog's for ${config.model}`,
    Math.min(catalogued.maxTokens || DEFAULT_MAX_TOKENS, MAX_DEFAULT_REPLY),
  );
  return { ref: config.model, model, apiKey, ...oauth?.fields, maxTokens, custom: false };
}

/**
 * The subscription sign-in for `provider` in `<home>/auth.json` (`guppy login`), unless a key is
 * given outright (GUPPY_API_KEY, --api-key): its token at start, and the fields that make the
 * runner ask for it at each request. It comes before a provider variable (ANTHROPIC_API_KEY):
 * signing in is the newer, deliberate choice. `model` follows the sign-in's endpoint (Copilot).
 */
function signIn(
  config: ModelSettings,
  provider: string,
  model: Model<Api> | undefined,
):
  | { apiKey: string; fields: Pick<ResolvedModel, "getApiKey" | "subscription" | "oauth"> }
  | undefined {
  if (config.apiKey || !config.home) return undefined;
  const session = openOAuthSession(config.home, provider, model);
  if (!session) return undefined;
  // The token as stored, even if expired (a gateway restarted after days): the first request
  // refreshes it, not the start.
  return {
    apiKey: session.current(),
    fields: { getApiKey: () => session.key(), subscription: true, oauth: session },
  };
}

/** `, or sign in with guppy login <provider>` for the providers pi-ai has a sign-in flow for. */
function signInHint(provider: string): string {
  return getOAuthProvider(provider) ? `, or sign in with \`guppy login ${provider}\`` : "";
}

/**
 * The reply limit to request: GUPPY_MAX_TOKENS, else `fallback`. It may be at most half the
 * context window — the rest is the prompt's, and guppy's own system prompt and tool definitions
 * take about 1,000 tokens of it — so a larger setting is refused (the context budget would
 * reserve only half and the request ask for more than the window holds) and a larger fallback
 * (a catalogued model's limit as big as its window, or a smaller GUPPY_CONTEXT_WINDOW) is capped.
 */
function replyLimit(
  config: ModelSettings,
  contextWindow: number,
  windowFrom: string,
  fallback: number,
): number {
  const half = Math.floor(contextWindow / 2);
  if (config.maxTokens === undefined) return Math.min(fallback, half);
  if (config.maxTokens > half) {
    const window =
      config.contextWindow !== undefined
        ? settingWithValue("contextWindow", config.contextWindow, config)
        : `${windowFrom}; ${settingPlaces("contextWindow", config.settings)} sets another`;
    throw new ConfigError(
      `${settingWithValue("maxTokens", config.maxTokens, config)} leaves too little of the ${contextWindow}-token context window (${window}) for the prompt: the reply limit may be at most half the window, ${half}.`,
    );
  }
  return config.maxTokens;
}

function buildCustom(
  config: ModelSettings,
  provider: string,
  modelId: string,
  baseUrl: string,
  api: WireApi,
  env: NodeJS.ProcessEnv = process.env,
): ResolvedModel {
  const catalogued = safeCatalogLookup(provider, modelId);
  const contextWindow =
    config.contextWindow ?? catalogued?.contextWindow ?? DEFAULT_CUSTOM_CONTEXT_WINDOW;
  const maxTokens = replyLimit(
    config,
    contextWindow,
    catalogued
      ? `the catalog's for ${provider}/${modelId}`
      : "assumed for a model not in the catalog",
    Math.min(
      catalogued?.maxTokens || DEFAULT_MAX_TOKENS,
      MAX_DEFAULT_REPLY,
      Math.floor(contextWindow / 4),
    ),
  );
  const model: Model<Api> = {
    id: modelId,
    name: catalogued?.name ?? modelId,
    api,
    provider,
    baseUrl,
    reasoning: false,
    input: catalogued?.input ?? ["text"],
    cost: config.modelCost ??
      catalogued?.cost ?? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow,
    maxTokens,
  };
  // A sign-in's endpoint is the custom base URL here, not the one its credentials name.
  const oauth = signIn(config, provider, undefined);
  const apiKey =
    config.apiKey ??
    oauth?.apiKey ??
    getEnvApiKey(provider) ??
    envValue(env, envKeyName(provider)) ??
    "guppy-no-key";
  return {
    ref: `${provider}/${modelId}`,
    model,
    apiKey,
    ...oauth?.fields,
    maxTokens,
    custom: true,
  };
}

function safeCatalogLookup(provider: string, modelId: string): Model<Api> | undefined {
  if (!(getProviders() as string[]).includes(provider)) return undefined;
  return (getModels(provider as never) as Model<Api>[]).find((m) => m.id === modelId);
}

function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name];
  return v && v.trim() !== "" ? v : undefined;
}

/** The conventional API-key variable of a provider: ANTHROPIC_API_KEY, OPENROUTER_API_KEY, ... */
export function envKeyName(provider: string): string {
  if (provider === "google") return "GEMINI_API_KEY";
  return `${provider.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_API_KEY`;
}

/** Local OpenAI-compatible servers guppy looks for when no model is configured. */
export const localServers = [
  { provider: "ollama", name: "Ollama", baseUrl: "http://127.0.0.1:11434/v1" },
  { provider: "lmstudio", name: "LM Studio", baseUrl: "http://127.0.0.1:1234/v1" },
] as const;

export interface DiscoveredModel {
  provider: string;
  baseUrl: string;
  modelId: string;
}

/**
 * The models an OpenAI-compatible server lists at `<baseUrl>/models`, or undefined when it does
 * not answer in time.
 */
export async function listServerModels(
  baseUrl: string,
  timeoutMs = 400,
  apiKey?: string,
): Promise<string[] | undefined> {
  try {
    const response = await fetch(`${baseUrl.replace(/\/+$/, "")}/models`, {
      signal: AbortSignal.timeout(timeoutMs),
      ...(apiKey ? { headers: { authorization: `Bearer ${apiKey}` } } : {}),
    });
    if (!response.ok) return undefined;
    const body = (await response.json()) as { data?: Array<{ id?: unknown }> };
    return (body.data ?? []).flatMap((m) => (typeof m.id === "string" ? [m.id] : []));
  } catch {
    return undefined;
  }
}

/** Asks each local server for its models (short timeout); the first that answers with one wins. */
export async function discoverLocalModel(
  servers: ReadonlyArray<{ provider: string; baseUrl: string }> = localServers,
  timeoutMs = 400,
): Promise<DiscoveredModel | undefined> {
  const probes = servers.map(async (server) => {
    const id = (await listServerModels(server.baseUrl, timeoutMs))?.[0];
    if (id === undefined) throw new Error("no models");
    return { provider: server.provider, baseUrl: server.baseUrl, modelId: id };
  });
  const results = await Promise.allSettled(probes);
  for (const r of results) if (r.status === "fulfilled") return r.value;
  return undefined;
}

/**
 * The catalog id `typed` most likely meant: a typo of a whole id, or of its beginning (an id
 * typed without its date or version suffix, `claude-sonnet-4-5` for `claude-sonnet-4-5-20250929`),
 * the whole id winning a tie. Undefined when none is within about one edit in five characters.
 */
export function closestModelId(typed: string, ids: readonly string[]): string | undefined {
  const t = typed.toLowerCase();
  const allowed = Math.max(2, Math.ceil(t.length / 5));
  let best: { id: string; score: number } | undefined;
  for (const id of ids) {
    const lower = id.toLowerCase();
    const whole = editDistance(t, lower);
    const start = lower.length > t.length ? editDistance(t, lower.slice(0, t.length)) + 0.5 : whole;
    const score = Math.min(whole, start);
    // Equal scores: the shorter id (the alias rather than a dated snapshot).
    if (
      score <= allowed &&
      (!best || score < best.score || (score === best.score && id.length < best.id.length))
    ) {
      best = { id, score };
    }
  }
  return best?.id;
}
