// Web search through a provider the owner configured: the Brave Search API or a SearXNG
// instance. Their base URLs are the owner's own settings, so they are fetched as given (read_url's
// SSRF guard is for addresses the model chooses). Failures become one-line errors naming the
// setting to check; identical queries within ten minutes are answered from a small cache, so a
// model that repeats itself does not spend the owner's quota.

import { isObject } from "../config/setting-parsers.js";
import { retryAfterMs, sleep } from "../time/wait.js";

/** A configured search provider; Brave wins when both are set. */
export type SearchProvider =
  | { type: "brave"; apiKey: string; baseUrl: string }
  | { type: "searxng"; url: string };

/** One result as the providers give it, snippet already plain text. */
export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
  /** How old the page is, as the provider says it ("2 days ago", an ISO date), when it does. */
  age?: string;
}

/** Searches with one provider: at most `count` results for `query`. Throws a one-line Error. */
export type WebSearch = (
  query: string,
  count: number,
  signal?: AbortSignal,
) => Promise<SearchResult[]>;

/** The settings web_search reads (GuppyConfig has them). */
export interface WebSearchSettings {
  braveApiKey?: string;
  braveBaseUrl?: string;
  searxngUrl?: string;
}

/** The provider the settings name, Brave first; undefined when none is configured. */
export function searchProviderFrom(settings: WebSearchSettings): SearchProvider | undefined {
  if (settings.braveApiKey) {
    return {
      type: "brave",
      apiKey: settings.braveApiKey,
      baseUrl: settings.braveBaseUrl ?? "https://api.search.brave.com",
    };
  }
  if (settings.searxngUrl) return { type: "searxng", url: settings.searxngUrl };
  return undefined;
}

export interface WebSearchOptions {
  provider: SearchProvider;
  /** Answers repeated queries (default: one cache shared by every thread of this process). */
  cache?: SearchCache;
  /** Longest wait for one HTTP request (default 15 s). */
  timeoutMs?: number;
  /** Longest `retry-after` a 429 is waited out for, once (default 10 s); longer fails at once. */
  maxRetryWaitMs?: number;
}

const DEFAULT_TIMEOUT_MS = 15_000;
const DEFAULT_MAX_RETRY_WAIT_MS = 10_000;
/** The wait after a 429 without `retry-after`: long enough for a per-second rate limit. */
const DEFAULT_RETRY_WAIT_MS = 1_000;

/** A search function over `options.provider`, with its cache, timeout and one 429 retry. */
export function createWebSearch(options: WebSearchOptions): WebSearch {
  const { provider } = options;
  const cache = options.cache ?? sharedSearchCache;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxRetryWaitMs = options.maxRetryWaitMs ?? DEFAULT_MAX_RETRY_WAIT_MS;
  const name = labels[provider.type];
  const identity =
    provider.type === "brave" ? `brave ${provider.baseUrl}` : `searxng ${provider.url}`;

  return async (query, count, signal) => {
    const key = `${identity}\n${count}\n${query}`;
    const cached = cache.get(key);
    if (cached) return cached;
    const request = providerRequest(provider, query, count);
    let response = await send(request, name, timeoutMs, signal);
    if (response.status === 429) {
      const wait =
        retryAfterMs({ "retry-after": response.headers.get("retry-after") ?? "" }) ??
        DEFAULT_RETRY_WAIT_MS;
      await response.body?.cancel();
      if (wait > maxRetryWaitMs) {
        throw new Error(
          `${name} rate limit reached (HTTP 429); it asks to wait ${Math.ceil(wait / 1000)} s. Try again later.`,
        );
      }
      if (!(await sleep(wait, signal))) throw signal?.reason;
      response = await send(request, name, timeoutMs, signal);
      if (response.status === 429) {
        await response.body?.cancel();
        throw new Error(
          `${name} rate limit reached (HTTP 429), again after waiting ${Math.ceil(wait / 1000)} s. Try again later.`,
        );
      }
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new Error(httpProblem(provider, name, response.status));
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch {
      throw new Error(`${name} answered with something that is not JSON (${request.url.origin}).`);
    }
    // Loaded at the first search, not at every start.
    const { decodeHTML } = await import("entities");
    const results = parseResults(provider, body, decodeHTML);
    if (!results) {
      throw new Error(`${name} answered JSON without a result list (${request.url.origin}).`);
    }
    const kept = results.slice(0, count);
    cache.set(key, kept);
    return kept;
  };
}

interface ProviderRequest {
  url: URL;
  headers: Record<string, string>;
}

const labels: Record<SearchProvider["type"], string> = {
  brave: "Brave Search",
  searxng: "SearXNG",
};

/**
 * The provider's documented search request: Brave's `GET /res/v1/web/search`
 * (https://api-dashboard.search.brave.com/app/documentation/web-search/get-started), SearXNG's
 * `GET /search?format=json` (https://docs.searxng.org/dev/search_api.html; it has no count, the
 * list is cut here).
 */
function providerRequest(provider: SearchProvider, query: string, count: number): ProviderRequest {
  switch (provider.type) {
    case "brave": {
      const url = endpoint(provider.baseUrl, "/res/v1/web/search");
      url.searchParams.set("q", query);
      url.searchParams.set("count", String(count));
      return {
        url,
        headers: { Accept: "application/json", "X-Subscription-Token": provider.apiKey },
      };
    }
    case "searxng": {
      const url = endpoint(provider.url, "/search");
      url.searchParams.set("q", query);
      url.searchParams.set("format", "json");
      return { url, headers: { Accept: "application/json" } };
    }
  }
}

/** The results in a provider's answer, or undefined when `body` is not one. */
function parseResults(
  provider: SearchProvider,
  body: unknown,
  decode: DecodeHtml,
): SearchResult[] | undefined {
  switch (provider.type) {
    case "brave": {
      const web = field(body, "web");
      // Brave leaves `web` out of an answer without web results.
      if (web === undefined && isObject(body)) return [];
      return resultList(field(web, "results"), "description", "age", decode);
    }
    case "searxng":
      return resultList(field(body, "results"), "content", "publishedDate", decode);
  }
}

/** `base` (which may carry a path, a proxy's) with `path` appended. */
function endpoint(base: string, path: string): URL {
  const url = new URL(base);
  url.pathname = url.pathname.replace(/\/+$/, "") + path;
  return url;
}

function resultList(
  list: unknown,
  snippetKey: string,
  ageKey: string,
  decode: DecodeHtml,
): SearchResult[] | undefined {
  if (!Array.isArray(list)) return undefined;
  return list.flatMap((item) => {
    const url = text(field(item, "url"));
    if (!url) return [];
    const age = text(field(item, ageKey));
    return [
      {
        title: plainText(text(field(item, "title")), decode) || url,
        url,
        snippet: plainText(text(field(item, snippetKey)), decode),
        ...(age ? { age } : {}),
      },
    ];
  });
}

function field(value: unknown, key: string): unknown {
  return isObject(value) ? value[key] : undefined;
}

function text(value: unknown): string {
  return typeof value === "string" ? value.trim() : "";
}

/** Decodes HTML entities (`entities`' decodeHTML: all of HTML's named and numeric ones). */
type DecodeHtml = (text: string) => string;

/**
 * `html` as plain text: tags dropped, entities decoded, whitespace collapsed. Snippets are short
 * inline markup such as Brave's `<strong>`, so no parser is needed; a `<` that opens no tag
 * ("3 < 4") stays.
 */
export function plainText(html: string, decode: DecodeHtml): string {
  return decode(html.replace(/<\/?[a-z!][^>]*>/gi, ""))
    .replace(/\s+/g, " ")
    .trim();
}

/** One request with its own timeout, joined to the run's signal; network failures as one line. */
async function send(
  request: ProviderRequest,
  name: string,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<Response> {
  signal?.throwIfAborted();
  const timeout = AbortSignal.timeout(timeoutMs);
  try {
    return await fetch(request.url, {
      headers: request.headers,
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
  } catch (error) {
    if (signal?.aborted) throw error;
    if (timeout.aborted) {
      throw new Error(
        `${name} did not answer within ${timeoutMs / 1000} s (${request.url.origin}).`,
      );
    }
    throw new Error(`could not reach ${name} at ${request.url.origin}: ${networkReason(error)}`);
  }
}

/** The most specific reason a fetch failed: undici puts the system error in `cause`. */
function networkReason(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    return typeof code === "string" && !cause.message.includes(code)
      ? `${code} ${cause.message}`
      : cause.message;
  }
  return error instanceof Error ? error.message : String(error);
}

function httpProblem(provider: SearchProvider, name: string, status: number): string {
  if (status === 401 || status === 403) {
    return provider.type === "brave"
      ? `${name} refused the API key (HTTP ${status}): check braveApiKey (BRAVE_API_KEY).`
      : `${name} at ${provider.url} refused the search (HTTP ${status}): check searxngUrl (GUPPY_SEARXNG_URL) and that its settings.yml lists json under search.formats.`;
  }
  if (status >= 500) {
    return `${name} failed with a server error (HTTP ${status}); try again later.`;
  }
  const where =
    provider.type === "brave"
      ? "check braveBaseUrl (GUPPY_BRAVE_BASE_URL)"
      : "check searxngUrl (GUPPY_SEARXNG_URL)";
  return `${name} answered HTTP ${status}; ${where}.`;
}

/** Recent results by provider, count and query; the oldest entry goes first when full. */
export interface SearchCache {
  get(key: string): SearchResult[] | undefined;
  set(key: string, results: SearchResult[]): void;
}

/** A cache of at most `maxEntries` answers, each kept `ttlMs`. */
export function createSearchCache(
  options: { ttlMs?: number; maxEntries?: number; now?: () => number } = {},
): SearchCache {
  const ttlMs = options.ttlMs ?? 10 * 60_000;
  const maxEntries = options.maxEntries ?? 100;
  const now = options.now ?? Date.now;
  const entries = new Map<string, { at: number; results: SearchResult[] }>();
  return {
    get(key) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (now() - entry.at >= ttlMs) {
        entries.delete(key);
        return undefined;
      }
      return entry.results;
    },
    set(key, results) {
      entries.delete(key);
      entries.set(key, { at: now(), results });
      while (entries.size > maxEntries) {
        const oldest = entries.keys().next().value;
        if (oldest === undefined) break;
        entries.delete(oldest);
      }
    },
  };
}

/** The process's cache: threads share it, so one thread's repeat is another's hit too. */
const sharedSearchCache = createSearchCache();

/** The results as a numbered list (title, URL, snippet, age), the form the tool hands the model. */
export function formatResults(results: readonly SearchResult[]): string {
  return results
    .map((result, i) => {
      const lines = [`${i + 1}. ${result.title}`, `   ${result.url}`];
      if (result.snippet) lines.push(`   ${result.snippet}`);
      if (result.age) lines.push(`   Age: ${result.age}`);
      return lines.join("\n");
    })
    .join("\n\n");
}
