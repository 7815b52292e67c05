import { listServerModels, localServers } from "@guppy/core";
import { closestName } from "@guppy/core/config";
import { type Api, getModels, getProviders, type Model } from "@mariozechner/pi-ai";

/** The catalog providers `guppy setup` offers by name, each with the model it suggests. */
export const catalogChoices = [
  { provider: "anthropic", label: "Anthropic", defaultModel: "claude-sonnet-4-5" },
  { provider: "openai", label: "OpenAI", defaultModel: "gpt-5-mini" },
  { provider: "openrouter", label: "OpenRouter", defaultModel: "anthropic/claude-sonnet-4.5" },
  { provider: "google", label: "Google (Gemini)", defaultModel: "gemini-2.5-flash" },
] as const;

/**
 * Subscriptions `guppy setup` signs in to (`guppy login`), each with the model it suggests;
 * `only`: the provider has no API keys, so `--provider` alone means signing in.
 */
export const subscriptionChoices = [
  {
    provider: "anthropic",
    label: "Claude Pro/Max subscription (sign in, no key)",
    defaultModel: "claude-sonnet-4-5",
    only: false,
  },
  {
    provider: "openai-codex",
    label: "ChatGPT Plus/Pro subscription (sign in, no key)",
    defaultModel: "gpt-5.1-codex-mini",
    only: true,
  },
  {
    provider: "github-copilot",
    label: "GitHub Copilot subscription (sign in, no key)",
    defaultModel: "claude-sonnet-4.5",
    only: true,
  },
] as const;

/** `--provider custom`: any OpenAI- or Anthropic-compatible endpoint (base URL + GUPPY_API). */
export const CUSTOM = "custom";

/** The provider of a model on a custom endpoint given without one (`--model llama3`). */
export const CUSTOM_PREFIX = "custom";

/** pi-ai's catalog providers (the four above first, then any other it knows). */
export function catalogProviders(): string[] {
  return getProviders() as string[];
}

export function catalogIds(provider: string): string[] {
  return (getModels(provider as never) as Model<Api>[]).map((m) => m.id);
}

/** The model a provider's setup suggests: the choice's, else the catalog's first. */
export function defaultModelId(provider: string): string | undefined {
  const choice = [...catalogChoices, ...subscriptionChoices].find((c) => c.provider === provider);
  const ids = catalogIds(provider);
  return choice && ids.includes(choice.defaultModel) ? choice.defaultModel : ids[0];
}

/** Every name `--provider` takes. */
export function providerNames(): string[] {
  return [...catalogProviders(), ...localServers.map((s) => s.provider), CUSTOM];
}

/**
 * What was meant by a model id not in the catalog: the id two edits away at most, else the
 * first ids containing what was typed.
 */
export function suggestModels(typed: string, ids: readonly string[]): string[] {
  const close = closestName(typed, ids);
  if (close) return [close];
  const lower = typed.toLowerCase();
  return ids.filter((id) => id.toLowerCase().includes(lower)).slice(0, 5);
}

export type LocalServer = (typeof localServers)[number];

/** A local server that answered, with the models it serves. */
export interface FoundServer {
  server: LocalServer;
  models: string[];
}

/** The local Ollama and LM Studio that answer with at least one model. */
export async function findLocalServers(): Promise<FoundServer[]> {
  const found = await Promise.all(
    localServers.map(async (server) => ({
      server,
      models: await listServerModels(server.baseUrl),
    })),
  );
  return found.flatMap((f) =>
    f.models && f.models.length > 0 ? [{ server: f.server, models: f.models }] : [],
  );
}
