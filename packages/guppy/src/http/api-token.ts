import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, type GuppyConfig } from "@guppy/core";

export const API_TOKEN_FILE = "api-token";

export interface ApiToken {
  token: string;
  source: "env" | "file" | "generated";
  /** `<home>/api-token` when the token is stored there. */
  path?: string;
}

export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/**
 * GUPPY_API_TOKEN, else the token stored in `<home>/api-token` (mode 0600), else — only on a
 * loopback host — a new random token saved there. A non-loopback host without any token is refused.
 */
export function resolveApiToken(config: GuppyConfig): ApiToken {
  if (config.apiToken) return { token: config.apiToken, source: "env" };
  const path = join(config.home, API_TOKEN_FILE);
  if (existsSync(path)) {
    const token = readFileSync(path, "utf8").trim();
    if (token.length >= 16) return { token, source: "file", path };
  }
  if (!isLoopback(config.httpHost)) {
    throw new ConfigError(
      `GUPPY_HTTP_HOST is ${config.httpHost}, which is not a loopback address, and no API token is set: set GUPPY_API_TOKEN before exposing the HTTP API.`,
    );
  }
  mkdirSync(config.home, { recursive: true });
  const token = randomBytes(24).toString("base64url");
  writeFileSync(path, `${token}\n`, { mode: 0o600 });
  return { token, source: "generated", path };
}
