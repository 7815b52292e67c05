import { booleanValue, listValue, tokenValue, urlValue } from "../config/setting-parsers.js";
import type { SettingDefinitions, SettingValues } from "../config/settings-schema.js";

/** The web tools' settings: the search providers and what `read_url` may fetch. */
export const webSettings = {
  braveApiKey: {
    env: "BRAVE_API_KEY",
    parse: tokenValue,
    secret: true,
    description:
      "Brave Search API key: offers the `web_search` tool (free tier: 2,000 queries a month)",
  },
  braveBaseUrl: {
    env: "GUPPY_BRAVE_BASE_URL",
    parse: urlValue,
    default: "https://api.search.brave.com",
    description: "Base URL of the Brave Search API (a proxy or a stand-in)",
  },
  searxngUrl: {
    env: "GUPPY_SEARXNG_URL",
    parse: urlValue,
    description:
      "A SearXNG instance (keyless, self-hosted, JSON format enabled) for `web_search`, e.g. http://127.0.0.1:8888",
  },
  fetchAllowPrivate: {
    env: "GUPPY_FETCH_ALLOW_PRIVATE",
    parse: booleanValue,
    default: false,
    description:
      "Let `read_url` fetch loopback, private, link-local and cloud-metadata addresses (refused by default)",
  },
  fetchAllowHosts: {
    env: "GUPPY_FETCH_ALLOW_HOSTS",
    parse: listValue(),
    description:
      "Host names `read_url` may fetch even when they resolve to a private address, comma-separated, as written in the URL",
  },
} satisfies SettingDefinitions;

export type WebSettingValues = SettingValues<typeof webSettings>;
