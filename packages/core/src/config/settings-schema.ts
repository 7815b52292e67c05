import type { Parser } from "./setting-parsers.js";

/**
 * The smallest GUPPY_CONTEXT_WINDOW: room for guppy's system prompt, its tools (~1,100 tokens with
 * the schedule, messaging and subagent tools) and a short turn beside a reply of half the window.
 */
export const MIN_CONTEXT_WINDOW = 6144;

/** Wire protocols a custom endpoint (GUPPY_BASE_URL) can speak. */
export const wireApis = ["openai-completions", "anthropic-messages", "openai-responses"] as const;
export type WireApi = (typeof wireApis)[number];

/** One setting: its settings.json key (and flag, in kebab case) is the key it has in its table. */
export interface SettingDefinition<T = unknown> {
  /**
   * Environment variable read for this key (its flag is the key in kebab case). Absent: the
   * setting is read from settings.json only, where its value may be any JSON (an object of
   * lists, say), which no variable or flag could spell readably.
   */
  env?: string;
  parse: Parser<T>;
  default?: T;
  /** Masked by `guppy config`, never shown in an error, withheld from tool commands. */
  secret?: boolean;
  description: string;
  /**
   * The parser to use when it depends on other entries of settings.json (the `tools` setting
   * may name the tools of the MCP servers `mcpServers` lists). Absent: `parse`.
   */
  parserFor?: (settingsFile: Readonly<Record<string, unknown>>) => Parser<T>;
}

/** A table of settings by key: a folder's, core's (settings.ts) or the ones an app adds. */
// biome-ignore lint/suspicious/noExplicitAny: a table holds settings of every value type
export type SettingDefinitions = Record<string, SettingDefinition<any>>;

type ValueOf<D> = D extends { parse: Parser<infer T> } ? T : never;

/** The values a table of settings gives: a setting with a default always has one. */
export type SettingValues<S extends SettingDefinitions> = {
  -readonly [K in keyof S as S[K] extends { default: unknown } ? K : never]: ValueOf<S[K]>;
} & {
  -readonly [K in keyof S as S[K] extends { default: unknown } ? never : K]?: ValueOf<S[K]>;
};

/** The environment variables of the settings marked secret. */
export function secretEnvNames(settings: SettingDefinitions): string[] {
  return Object.values(settings).flatMap((def) => (def.secret && def.env ? [def.env] : []));
}
