import { closeSync, mkdirSync, openSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import type { OAuthCredentials } from "@mariozechner/pi-ai/oauth";
import { ConfigError } from "../config/config-error.js";
import { writeFileAtomic } from "../fs/write.js";

// <home>/auth.json: the subscriptions guppy is signed in to (`guppy login`), as pi's coding agent
// keeps them — `{ "<provider>": { "type": "oauth", "access", "refresh", "expires", ... } }` — so
// one file format serves both. Mode 600, written whole (atomically), never visible to tools.

/** The file's name in the data directory. */
export const AUTH_FILE = "auth.json";

/** One provider's sign-in, as stored. */
export type StoredOAuth = { type: "oauth" } & OAuthCredentials;

/** The file's entries by provider id; entries of another type (pi's `api_key`) are kept as they are. */
export type AuthFileData = Record<string, unknown>;

export function authFilePath(home: string): string {
  return join(home, AUTH_FILE);
}

/** The file's entries; {} when it does not exist. Throws ConfigError (one line) when unreadable. */
export function readAuthFile(home: string): AuthFileData {
  const path = authFilePath(home);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw new ConfigError(`Could not read ${path}: ${(error as Error).message}`);
  }
  if (text.trim() === "") return {};
  try {
    const data: unknown = JSON.parse(text);
    if (data !== null && typeof data === "object" && !Array.isArray(data))
      return data as AuthFileData;
  } catch {
    // Named below.
  }
  throw new ConfigError(
    `${path} is not a JSON object of sign-ins: remove it and sign in again (guppy login <provider>).`,
  );
}

/** The provider's OAuth sign-in in the file, if it has a usable one. */
export function storedOAuth(data: AuthFileData, provider: string): StoredOAuth | undefined {
  const entry = Object.hasOwn(data, provider) ? data[provider] : undefined;
  if (entry === null || typeof entry !== "object") return undefined;
  const e = entry as Record<string, unknown>;
  if (e.type !== "oauth" || typeof e.access !== "string" || typeof e.refresh !== "string")
    return undefined;
  if (typeof e.expires !== "number") return undefined;
  return e as StoredOAuth;
}

/** The providers the file holds an OAuth sign-in for. */
export function signedInProviders(data: AuthFileData): string[] {
  return Object.keys(data).filter((provider) => storedOAuth(data, provider) !== undefined);
}

/**
 * Sets (or with undefined, removes) one provider's entry, re-reading the file first so another
 * process's entries survive; written atomically with mode 600. Returns whether an entry was there.
 */
export function writeAuthEntry(
  home: string,
  provider: string,
  credentials: OAuthCredentials | undefined,
): boolean {
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const data = readAuthFile(home);
  const had = Object.hasOwn(data, provider);
  if (credentials) data[provider] = { ...credentials, type: "oauth" };
  else delete data[provider];
  writeFileAtomic(authFilePath(home), `${JSON.stringify(data, null, 2)}\n`, 0o600);
  return had;
}

/** Identifies the file's version (a login, a logout, another process's refresh changes it). */
export function authFileStamp(home: string): string {
  try {
    const s = statSync(authFilePath(home));
    return `${s.ino}:${s.size}:${s.mtimeMs}`;
  } catch {
    return "none";
  }
}

/** A lock older than this is a crashed process's: taken over. A refresh takes a second or two. */
const STALE_LOCK_MS = 30_000;

/**
 * Runs `fn` holding `<home>/auth.json.lock`, so two guppy processes (a gateway and a `guppy chat`)
 * never refresh one sign-in at once: with a refresh token that is replaced at each use, the
 * second refresh would present a spent token and sign both out.
 */
export async function withAuthLock<T>(home: string, fn: () => Promise<T>): Promise<T> {
  const path = `${authFilePath(home)}.lock`;
  mkdirSync(home, { recursive: true, mode: 0o700 });
  for (;;) {
    try {
      closeSync(openSync(path, "wx", 0o600));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    let age = 0;
    try {
      age = Date.now() - statSync(path).mtimeMs;
    } catch {
      continue; // Released meanwhile.
    }
    if (age > STALE_LOCK_MS) rmSync(path, { force: true });
    else await new Promise((resolve) => setTimeout(resolve, 50));
  }
  try {
    return await fn();
  } finally {
    rmSync(path, { force: true });
  }
}
