import type { AgentTool } from "@mariozechner/pi-agent-core";
import { StringEnum } from "@mariozechner/pi-ai";
import { type Static, Type } from "typebox";
import { searchHistory } from "../search/search-history.js";
import { excerptAround, matchQuery, parseSearchQuery } from "../search/search-query.js";
import type { PlatformHistory, SearchHit, SearchScope } from "../search/types.js";
import { canonicalThreadId, subagentOf } from "../store/thread-layout.js";
import { localParts } from "../time/local-time.js";
import type { Role } from "../types.js";
import { untrustedContent } from "../web/untrusted-content.js";
import { textResult } from "./tool-context.js";

const DEFAULT_LIMIT = 10;
const MAX_LIMIT = 50;
/** How long the platform's history may take: its pages are requests to the platform. */
const PLATFORM_BUDGET_MS = 20_000;

const parameters = Type.Object({
  query: Type.String({
    description: 'Words that must all appear (any case); "a quoted phrase" must appear as written',
  }),
  scope: Type.Optional(
    StringEnum(["channel", "thread"] as const, {
      description: "channel (default): every conversation of this channel; thread: this one only",
    }),
  ),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_LIMIT,
      description: `At most this many (${DEFAULT_LIMIT})`,
    }),
  ),
});

type Params = Static<typeof parameters>;

export interface SearchChannelToolOptions {
  /** GUPPY_HOME: the thread folders and their log.jsonl files are under it. */
  home: string;
  /** The thread the tool is made for (a subagent's: it searches its parent's conversation). */
  threadId: string;
  /** Whose run it is: a guest's search reaches only its own thread, whatever scope it asks. */
  role: Role;
  /** GUPPY_TIMEZONE (absent: the system's): the zone the results' times are told in. */
  timezone?: string;
  /**
   * The chat platform's history of the thread and its channel, where its channel can list it:
   * asked at each search (a gateway's channels start after its threads' tools are made).
   */
  platformHistory?: () => PlatformHistory | undefined;
}

/**
 * `search_channel`: finds what was said earlier — in this conversation or across the channel's
 * conversations — in guppy's own record (each thread's log.jsonl) and, where the app hands it the
 * platform's history (Slack, Discord), what people said there without guppy. For what was said
 * before the context was compacted or started anew, or in the channel's other threads.
 */
export function createSearchChannelTool(
  options: SearchChannelToolOptions,
): AgentTool<typeof parameters> {
  const own = canonicalThreadId(options.threadId);
  const threadId = subagentOf(own)?.parentId ?? own;
  const guest = options.role === "guest";
  return {
    name: "search_channel",
    label: "search_channel",
    description: guest
      ? "Search what was said earlier in this conversation (messages, not tool output): newest first, with time, author and an excerpt."
      : "Search what was said earlier in this channel's conversations or this one (messages, not tool output): newest first, with time, author, thread id and an excerpt.",
    parameters,
    async execute(_id, params: Params, signal) {
      const query = parseSearchQuery(params.query);
      if (!query) throw new Error('query is empty: give words or a "quoted phrase" to look for');
      const limit = Math.min(Math.max(Math.trunc(params.limit ?? DEFAULT_LIMIT), 1), MAX_LIMIT);
      // A guest asking for the channel still gets its own thread: said in the answer, not an error.
      const asked: SearchScope = params.scope ?? "channel";
      const scope: SearchScope = guest ? "thread" : asked;
      const budget = AbortSignal.timeout(PLATFORM_BUDGET_MS);
      const platformHistory = options.platformHistory?.();
      const result = await searchHistory({
        home: options.home,
        threadId,
        scope,
        query,
        limit,
        ...(platformHistory ? { platformHistory } : {}),
        signal: signal ? AbortSignal.any([signal, budget]) : budget,
      });
      const where = scope === "thread" ? "this conversation" : "this channel";
      const notes = [
        ...(guest && asked === "channel"
          ? ["a guest's search reaches this conversation only"]
          : []),
        ...(result.platformNote ? [result.platformNote] : []),
        ...(budget.aborted ? ["the search stopped after 20 s"] : []),
      ];
      const noted = notes.length > 0 ? ` (${notes.join("; ")})` : "";
      if (result.hits.length === 0) {
        return textResult(
          `No messages in ${where} match ${JSON.stringify(params.query)}${noted}.`,
          {
            scope,
            count: 0,
          },
        );
      }
      const zone = localParts(new Date(), options.timezone).zone;
      const header = `${result.hits.length} message${result.hits.length === 1 ? "" : "s"} in ${where} matching ${JSON.stringify(params.query)}, newest first (times in ${zone})${noted}:`;
      const lines = result.hits.map((hit, i) => formatHit(hit, i + 1, threadId, query, options));
      return textResult(
        `${header}\n${untrustedContent(`search_channel: ${params.query}`, lines.join("\n"))}`,
        { scope, count: result.hits.length },
      );
    },
  };
}

function formatHit(
  hit: SearchHit,
  n: number,
  self: string,
  query: NonNullable<ReturnType<typeof parseSearchQuery>>,
  options: Pick<SearchChannelToolOptions, "timezone">,
): string {
  const p = localParts(new Date(hit.time), options.timezone);
  const two = (v: number) => String(v).padStart(2, "0");
  const time = `${p.weekday} ${p.date} ${two(p.hour)}:${two(p.minute)}`;
  const thread = hit.threadId === self ? `${hit.threadId} (this conversation)` : hit.threadId;
  const excerpt = excerptAround(hit.text, Math.max(0, matchQuery(query, hit.text)));
  return `${n}. ${time} · ${oneLine(hit.author)} · ${thread}\n   ${excerpt}`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim().slice(0, 80);
}
