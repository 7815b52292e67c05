import { envKeyName, listServerModels } from "@guppy/core";
import { type WireApi, wireApis } from "@guppy/core/config";
import { UsageError } from "../cli/cli-error.js";
import type { Asker } from "../terminal/ask.js";
import {
  CUSTOM,
  CUSTOM_PREFIX,
  catalogChoices,
  catalogIds,
  catalogProviders,
  defaultModelId,
  type FoundServer,
  findLocalServers,
  providerNames,
  subscriptionChoices,
  suggestModels,
} from "./setup-providers.js";

/** The model setup settles on: what settings.json gets, and the key guppy.env gets. */
export interface ModelChoice {
  /** `provider/model-id`. */
  ref: string;
  /** A local server's or custom endpoint's; none for a catalog provider. */
  baseUrl?: string;
  api?: WireApi;
  /** The key's variable: the provider's own (ANTHROPIC_API_KEY, ...) or GUPPY_API_KEY. */
  keyName?: string;
  key?: string;
  /** Where the key came from: a flag or typed ones are written to guppy.env. */
  keyFrom?: "flag" | "typed" | "environment" | "guppy.env";
  /** A subscription signed in to instead of a key (`guppy login <it>`): auth.json, no key. */
  signIn?: string;
}

/** What the questions know: the flags, guppy.env, and the answers of a previous round. */
export interface ModelQuestions {
  asker: Asker | undefined;
  out: (text: string) => void;
  /** Flags that answer a question (each skips its question until a failed test asks again). */
  given: {
    provider?: string;
    model?: string;
    baseUrl?: string;
    api?: string;
    apiKey?: string;
    /** --login: the provider's subscription instead of a key. */
    login?: boolean;
  };
  envFile: Record<string, string>;
  envFileName: string;
  /** The configured model's provider, the first round's default. */
  currentProvider?: string;
  /** The previous round's choice: its answers are the defaults when a failed test asks again. */
  previous?: ModelChoice & { provider: string };
}

/** Picks provider, model and key: from the flags, else (on a terminal) by asking. */
export async function chooseModel(q: ModelQuestions): Promise<ModelChoice & { provider: string }> {
  const provider = await chooseProvider(q);
  if (provider.kind === "local") {
    const { server, models } = provider.found;
    const id = await chooseModelId(q, {
      label: `${server.name}'s models`,
      ids: models,
      strict: true,
      given: stripPrefix(q.given.model, server.provider),
      fallback: previousId(q, server.provider) ?? models[0],
    });
    return {
      provider: server.provider,
      ref: `${server.provider}/${id}`,
      baseUrl: server.baseUrl,
      api: "openai-completions",
    };
  }
  if (provider.kind === "custom") return chooseCustom(q, CUSTOM_PREFIX);
  const name = provider.name;
  // A catalog provider's protocol at another URL (a proxy): a custom endpoint.
  if (provider.kind === "catalog" && q.given.baseUrl && !q.previous) return chooseCustom(q, name);
  const id = await chooseModelId(q, {
    label: `pi-ai's catalog for ${name}`,
    ids: catalogIds(name),
    strict: true,
    given: stripPrefix(q.given.model, name),
    fallback: previousId(q, name) ?? defaultModelId(name),
  });
  if (provider.kind === "signin") return { provider: name, ref: `${name}/${id}`, signIn: name };
  const keyName = envKeyName(name);
  const key = await chooseKey(q, keyName, false);
  return { provider: name, ref: `${name}/${id}`, keyName, ...key };
}

type ProviderPick =
  | { kind: "catalog"; name: string }
  /** A subscription (Claude Pro/Max, ChatGPT, Copilot): signed in to, no key. */
  | { kind: "signin"; name: string }
  | { kind: "local"; found: FoundServer }
  | { kind: "custom" };

/** The provider a flag gives: --provider, else --base-url (custom), else --model's prefix. */
function givenProvider(q: ModelQuestions): string | undefined {
  if (q.given.provider) return q.given.provider;
  if (q.given.baseUrl) return CUSTOM;
  const model = q.given.model;
  return model?.includes("/") ? model.slice(0, model.indexOf("/")) : undefined;
}

async function chooseProvider(q: ModelQuestions): Promise<ProviderPick> {
  const given = q.previous ? undefined : givenProvider(q);
  const locals = await findLocalServers();
  if (given !== undefined) {
    const pick = providerPick(given, locals, q.given.login === true);
    if (typeof pick !== "string") return pick;
    if (!q.asker) throw new UsageError(pick);
    q.out(`${pick}\n`);
  } else if (!q.asker) {
    throw new UsageError(
      `guppy setup --non-interactive needs the provider: --provider NAME (${menuNames(locals)}) or --model provider/model-id`,
    );
  }
  const asker = q.asker as Asker;
  const menu = [
    ...catalogChoices.map((c) => ({ name: c.provider, label: c.label })),
    ...subscriptionChoices.map((c) => ({ name: `${SIGN_IN}${c.provider}`, label: c.label })),
    ...locals.map((f) => ({
      name: f.server.provider,
      label: `${f.server.name} at ${f.server.baseUrl} (found here: ${f.models.length} model${f.models.length === 1 ? "" : "s"})`,
    })),
    { name: CUSTOM, label: "another OpenAI- or Anthropic-compatible endpoint (base URL)" },
  ];
  const preferred = q.previous?.provider ?? q.currentProvider ?? locals[0]?.server.provider;
  const known = (name: string | undefined) =>
    name === undefined ? undefined : menu.findIndex((m) => m.name === name);
  const found = known(preferred);
  const fallback = found !== undefined && found >= 0 ? found : 0;
  q.out(`Which model provider?\n${menu.map((m, i) => `  ${i + 1}) ${m.label}`).join("\n")}\n`);
  for (;;) {
    const answer = (await asker.ask(`Provider [${fallback + 1}]: `)).toLowerCase();
    const index = answer === "" ? fallback : /^\d+$/.test(answer) ? Number(answer) - 1 : -1;
    const name = menu[index]?.name ?? answer;
    const pick = name.startsWith(SIGN_IN)
      ? providerPick(name.slice(SIGN_IN.length), locals, true)
      : providerPick(name, locals);
    if (typeof pick !== "string") return pick;
    q.out(`${pick}\n`);
  }
}

/** A menu entry's name for a subscription: `signin:anthropic`. */
const SIGN_IN = "signin:";

/**
 * The provider a name means, or why it is none. `openai-codex` and `github-copilot` are
 * subscriptions only; Anthropic is one with `login` (--login).
 */
function providerPick(name: string, locals: FoundServer[], login = false): ProviderPick | string {
  if (name === CUSTOM) return { kind: "custom" };
  const subscription = subscriptionChoices.find((c) => c.provider === name);
  if (subscription && (login || subscription.only)) return { kind: "signin", name };
  if (login) {
    return `--login signs in to a subscription: ${subscriptionChoices.map((c) => c.provider).join(", ")}, not ${name}`;
  }
  const local = locals.find((f) => f.server.provider === name);
  if (local) return { kind: "local", found: local };
  if (name === "ollama" || name === "lmstudio") {
    return `no ${name === "ollama" ? "Ollama" : "LM Studio"} answered with a model at ${name === "ollama" ? "http://127.0.0.1:11434/v1" : "http://127.0.0.1:1234/v1"}: start it (and pull a model), or pick another provider`;
  }
  if (catalogProviders().includes(name)) return { kind: "catalog", name };
  const hint = suggestModels(name, providerNames())[0];
  return `unknown provider "${name}"${hint ? ` (did you mean "${hint}"?)` : ""}: one of ${menuNames(locals)}, or any of pi-ai's: ${catalogProviders().join(", ")}`;
}

function menuNames(locals: FoundServer[]): string {
  const names = [...catalogChoices.map((c) => c.provider), "ollama", "lmstudio", CUSTOM];
  return [...new Set([...names, ...locals.map((f) => f.server.provider)])].join(", ");
}

/** A custom endpoint: its base URL, protocol, key (optional) and a model id it serves. */
async function chooseCustom(
  q: ModelQuestions,
  prefix: string,
): Promise<ModelChoice & { provider: string }> {
  const prev = q.previous?.provider === CUSTOM ? q.previous : undefined;
  // Asked again: the model keeps the provider it was given (`anthropic/...` through a proxy).
  if (prev) prefix = prev.ref.slice(0, prev.ref.indexOf("/"));
  const baseUrl = await answerOrAsk(q, {
    given: q.previous ? undefined : q.given.baseUrl,
    fallback: prev?.baseUrl,
    question: "Base URL of the endpoint (e.g. http://127.0.0.1:8000/v1)",
    check: (v) => (/^https?:\/\/[^/\s]+/.test(v) ? undefined : `"${v}" is not an http(s) URL`),
    flag: "--base-url URL",
  });
  const givenRef = q.previous ? undefined : q.given.model;
  const refProvider = givenRef?.includes("/") ? givenRef.slice(0, givenRef.indexOf("/")) : prefix;
  const api = (await answerOrAsk(q, {
    given: q.previous ? undefined : q.given.api,
    fallback:
      prev?.api ?? (refProvider === "anthropic" ? "anthropic-messages" : "openai-completions"),
    question: `Protocol (${wireApis.join(", ")})`,
    check: (v) =>
      (wireApis as readonly string[]).includes(v)
        ? undefined
        : `"${v}" is not one of ${wireApis.join(", ")}`,
    flag: "--api PROTOCOL",
  })) as WireApi;
  const key = await chooseKey(q, "GUPPY_API_KEY", true);
  if (givenRef) {
    const ref = givenRef.includes("/") ? givenRef : `${prefix}/${givenRef}`;
    return { provider: CUSTOM, ref, baseUrl, api, keyName: "GUPPY_API_KEY", ...key };
  }
  const listed =
    api === "anthropic-messages" ? undefined : await listServerModels(baseUrl, 5000, key.key);
  const id = await chooseModelId(q, {
    label: `the models ${baseUrl} lists`,
    ids: listed ?? [],
    strict: false,
    given: undefined,
    fallback: prev ? prev.ref.slice(prev.ref.indexOf("/") + 1) : listed?.[0],
  });
  return {
    provider: CUSTOM,
    ref: `${prefix}/${id}`,
    baseUrl,
    api,
    keyName: "GUPPY_API_KEY",
    ...key,
  };
}

/** A value from its flag (checked), else asked on a terminal with a default. */
async function answerOrAsk(
  q: ModelQuestions,
  o: {
    given: string | undefined;
    fallback: string | undefined;
    question: string;
    check: (value: string) => string | undefined;
    flag: string;
  },
): Promise<string> {
  if (o.given !== undefined) {
    const problem = o.check(o.given);
    if (!problem) return o.given;
    if (!q.asker) throw new UsageError(problem);
    q.out(`${problem}\n`);
  }
  if (!q.asker) {
    if (o.fallback) return o.fallback;
    throw new UsageError(`guppy setup --non-interactive needs ${o.flag}`);
  }
  for (;;) {
    const answer =
      (await q.asker.ask(`${o.question}${o.fallback ? ` [${o.fallback}]` : ""}: `)) ||
      o.fallback ||
      "";
    const problem = answer === "" ? "an answer is needed" : o.check(answer);
    if (!problem) return answer;
    q.out(`${problem}\n`);
  }
}

/**
 * A model id: from --model (checked against `ids` when `strict`), else asked, with the closest
 * id suggested for one that is not there; `?` lists them.
 */
async function chooseModelId(
  q: ModelQuestions,
  o: { label: string; ids: string[]; strict: boolean; given?: string; fallback?: string },
): Promise<string> {
  const check = (id: string): string | undefined => {
    if (o.ids.includes(id) || (!o.strict && o.ids.length === 0)) return undefined;
    if (!o.strict) return undefined;
    const hints = suggestModels(id, o.ids);
    return `"${id}" is not in ${o.label}${hints.length > 0 ? ` (did you mean ${hints.map((h) => `"${h}"`).join(", ")}?)` : ""}`;
  };
  let fallback = o.fallback;
  if (o.given !== undefined && !q.previous) {
    const problem = check(o.given);
    if (!problem) return o.given;
    if (!q.asker) throw new UsageError(`--model: ${problem}`);
    q.out(`${problem}\n`);
    fallback = suggestModels(o.given, o.ids)[0] ?? fallback;
  }
  if (!q.asker) {
    if (fallback) return fallback;
    throw new UsageError("guppy setup --non-interactive needs --model provider/model-id");
  }
  const list = o.ids.length > 0 ? ` (? lists ${o.ids.length})` : "";
  for (;;) {
    const answer = await q.asker.ask(`Model${fallback ? ` [${fallback}]` : ""}${list}: `);
    if (answer === "?") {
      q.out(`${o.ids.join("\n")}\n`);
      continue;
    }
    const id = answer || fallback;
    if (!id) continue;
    const problem = check(id);
    if (!problem) return id;
    q.out(`${problem}\n`);
    fallback = suggestModels(id, o.ids)[0] ?? fallback;
  }
}

/**
 * The key: --api-key, else the one the environment or guppy.env has, else asked with nothing
 * echoed. Optional for a custom endpoint (a local vLLM wants none).
 */
async function chooseKey(
  q: ModelQuestions,
  name: string,
  optional: boolean,
): Promise<Pick<ModelChoice, "key" | "keyFrom">> {
  if (q.given.apiKey && !q.previous) return { key: q.given.apiKey, keyFrom: "flag" };
  const fromEnv = process.env[name]?.trim() || undefined;
  const inFile = q.envFile[name]?.trim() || undefined;
  const prev = q.previous?.keyName === name ? q.previous : undefined;
  const existing: Pick<ModelChoice, "key" | "keyFrom"> | undefined = prev?.key
    ? { key: prev.key, keyFrom: prev.keyFrom }
    : fromEnv
      ? { key: fromEnv, keyFrom: fromEnv === inFile ? "guppy.env" : "environment" }
      : inFile
        ? { key: inFile, keyFrom: "guppy.env" }
        : undefined;
  if (!q.asker) {
    if (existing || optional) return existing ?? {};
    throw new UsageError(
      `no key for the model: give --api-key KEY, or set ${name} in the environment or in ${q.envFileName}`,
    );
  }
  const keeps = existing
    ? `; Enter keeps the one ${prev ? "typed before" : `in ${existing.keyFrom === "guppy.env" ? q.envFileName : "the environment"}`}`
    : optional
      ? "; Enter for none"
      : "";
  for (;;) {
    const typed = await q.asker.askHidden(
      `API key, stored as ${name} (not shown as you type${keeps}): `,
    );
    if (typed) return { key: typed, keyFrom: "typed" };
    if (existing || optional) return existing ?? {};
  }
}

function stripPrefix(model: string | undefined, provider: string): string | undefined {
  if (model === undefined) return undefined;
  return model.startsWith(`${provider}/`) ? model.slice(provider.length + 1) : model;
}

function previousId(q: ModelQuestions, provider: string): string | undefined {
  const prev = q.previous;
  return prev?.provider === provider ? prev.ref.slice(provider.length + 1) : undefined;
}
