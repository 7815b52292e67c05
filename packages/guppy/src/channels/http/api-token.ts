import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, type GuppyConfig } from "@guppy/core";

export const API_TOKEN_FILE = "api-token";

/** The shortest API token guppy takes (one it generates has 32 characters). */
export const MIN_API_TOKEN_LENGTH = 16;

const TOKEN_RULE = `an API token is at least ${MIN_API_TOKEN_LENGTH} characters of visible ASCII (letters, digits, punctuation; no spaces)`;

/** The settings of the HTTP API (descriptor.ts). */
export type HttpConfig = GuppyConfig & { httpHost: string; httpPort: number; apiToken?: string };

export interface ApiToken {
  token: string;
  source: "env" | "file" | "generated";
  /** `<home>/api-token` when the token is stored there. */
  path?: string;
  /** Where the token came from, as the user set it (GUPPY_API_TOKEN, a file's path, …). */
  origin: string;
}

export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/**
 * Why `token` cannot be an API token, or undefined when it can. One rule wherever the token
 * comes from: long enough to resist guessing, and bytes every client sends as they are (a
 * header carries non-ASCII text as Latin-1 or UTF-8 depending on the client, so such a token
 * would never match).
 */
export function apiTokenProblem(token: string): string | undefined {
  if (token === "") return "it is empty";
  if (!/^[\x21-\x7e]+$/.test(token)) {
    return "it holds a space, a control character or a character outside ASCII";
  }
  const n = token.length;
  if (n < MIN_API_TOKEN_LENGTH) return `it is ${n} character${n === 1 ? "" : "s"} long`;
  return undefined;
}

/** Where a configured token was set, as the user wrote it. */
function configOrigin(config: HttpConfig): string {
  switch (config.sources.apiToken) {
    case "flag":
      return "--api-token";
    case "settings":
      return `"apiToken" in ${config.settingsPath}`;
    default:
      return "GUPPY_API_TOKEN";
  }
}

/**
 * The token a client of the home's running gateway uses (`guppy chat` attaching): the setting,
 * else the one stored in `<home>/api-token`. Never generated: the gateway made it at its start.
 */
export function existingApiToken(config: HttpConfig): string | undefined {
  if (config.apiToken) return config.apiToken;
  try {
    return readFileSync(join(config.home, API_TOKEN_FILE), "utf8").trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Tokens this process generated, by file. The gateway generates the token before its redactor
 * is made (apiTokenToRedact), so that the tools can never echo it into a log; the HTTP channel's
 * resolve later still reports it as generated (it tells the user where it is kept).
 */
const generatedHere = new Map<string, string>();

/**
 * The HTTP API's token, for the gateway's redactor: resolved as the HTTP channel will resolve
 * it, so a token generated at a first start is made now and redacted like one read from the
 * file. A token the channel will refuse is left to its start to report (undefined here, unless
 * `<home>/api-token` holds one at all).
 */
export function apiTokenToRedact(config: HttpConfig): string | undefined {
  try {
    return resolveApiToken(config).token;
  } catch {
    return existingApiToken(config);
  }
}

/**
 * GUPPY_API_TOKEN (or its setting), else the token stored in `<home>/api-token` (mode 0600),
 * else — only on a loopback host — a new random token saved there. A token from either place
 * that breaks the rule (`apiTokenProblem`) stops the start with a one-line error naming where it
 * came from; the file is never replaced. A non-loopback host without any token is refused.
 */
export function resolveApiToken(config: HttpConfig): ApiToken {
  if (config.apiToken) {
    const origin = configOrigin(config);
    const problem = apiTokenProblem(config.apiToken);
    if (problem) {
      throw new ConfigError(`${origin} is not a usable API token: ${problem}; ${TOKEN_RULE}.`);
    }
    return { token: config.apiToken, source: "env", origin };
  }
  const path = join(config.home, API_TOKEN_FILE);
  if (existsSync(path)) {
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (error) {
      throw new ConfigError(`Cannot read the API token in ${path}: ${(error as Error).message}`);
    }
    const token = text.trim();
    const problem = apiTokenProblem(token);
    if (problem) {
      throw new ConfigError(
        `${path} does not hold a usable API token: ${problem}; ${TOKEN_RULE} (fix the file, or remove it and guppy generates one).`,
      );
    }
    const source = generatedHere.get(path) === token ? "generated" : "file";
    return { token, source, path, origin: path };
  }
  if (!isLoopback(config.httpHost)) {
    throw new ConfigError(
      `GUPPY_HTTP_HOST is ${config.httpHost}, which is not a loopback address, and no API token is set: set GUPPY_API_TOKEN (or put one in ${path}) before exposing the HTTP API.`,
    );
  }
  mkdirSync(config.home, { recursive: true });
  const token = randomBytes(24).toString("base64url");
  // "wx": a file that appeared meanwhile is the user's, and stays as it is.
  writeFileSync(path, `${token}\n`, { mode: 0o600, flag: "wx" });
  generatedHere.set(path, token);
  return { token, source: "generated", path, origin: path };
}
