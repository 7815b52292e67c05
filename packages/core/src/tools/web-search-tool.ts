import type { AgentTool } from "@mariozechner/pi-agent-core";
import { type Static, Type } from "typebox";
import { untrustedContent } from "../web/untrusted-content.js";
import { formatResults, type SearchResult, type WebSearch } from "../web/web-search.js";
import { textResult } from "./tool-context.js";

const DEFAULT_COUNT = 5;
const MAX_COUNT = 20;

const parameters = Type.Object({
  query: Type.String({ description: "What to search the web for" }),
  count: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_COUNT,
      description: `How many results (default ${DEFAULT_COUNT}, at most ${MAX_COUNT})`,
    }),
  ),
});

/**
 * `web_search`: a numbered list of results (title, URL, snippet, age) from the configured
 * provider, inside an untrusted-content block: snippets are other people's text.
 */
export function createWebSearchTool(options: {
  search: WebSearch;
}): AgentTool<typeof parameters, { results: SearchResult[] }> {
  return {
    name: "web_search",
    label: "web_search",
    description:
      "Search the web. Returns numbered results: title, URL, a snippet and the page's age when known.",
    parameters,
    async execute(_id, params: Static<typeof parameters>, signal) {
      const query = params.query.trim();
      if (query === "") throw new Error("query is empty: there is nothing to search for");
      const count = Math.min(Math.max(Math.trunc(params.count ?? DEFAULT_COUNT), 1), MAX_COUNT);
      const results = await options.search(query, count, signal);
      if (results.length === 0) return textResult(`No results for "${query}".`, { results });
      return textResult(untrustedContent(`web search: ${query}`, formatResults(results)), {
        results,
      });
    },
  };
}
