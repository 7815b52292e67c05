import type { Api, Model } from "@mariozechner/pi-ai";
import {
  getOAuthProvider,
  type OAuthCredentials,
  type OAuthProviderInterface,
} from "@mariozechner/pi-ai/oauth";
import type { Logger } from "../logging/logger.js";
import {
  authFilePath,
  authFileStamp,
  readAuthFile,
  storedOAuth,
  withAuthLock,
  writeAuthEntry,
} from "./auth-file.js";

/** A token is refreshed this long before it expires, so no request goes out with a dying one. */
export const REFRESH_MARGIN_MS = 5 * 60_000;

/**
 * A subscription's sign-in (auth.json) as a model's key: asked at each request, it returns the
 * access token, refreshed first when it is about to expire — once for all the runs asking at that
 * moment, under a lock with other guppy processes, the new credentials written back atomically.
 */
export interface OAuthSession {
  /** pi-ai's OAuth provider id, also the model's provider (`anthropic`, `github-copilot`, ...). */
  readonly provider: string;
  /** The key as the credentials hold it now, without refreshing (possibly expired). */
  current(): string;
  /** The access token now, refreshed first when it is about to expire. */
  key(): string | Promise<string>;
  /** Every token value this process has held (old ones too: they may be in stored history). */
  secrets(): readonly { name: string; value: string }[];
  /** Where a failed refresh is logged (once); set by whoever makes the log. */
  useLogger(logger: Logger): void;
}

/**
 * The session for `providerId` when `<home>/auth.json` holds a sign-in for it and pi-ai knows
 * its OAuth flow; undefined otherwise. `model`, when given, is kept pointed where the credentials
 * say (Copilot's endpoint is named in its token): updated in place after each refresh.
 */
export function openOAuthSession(
  home: string,
  providerId: string,
  model?: Model<Api>,
  marginMs = REFRESH_MARGIN_MS,
): OAuthSession | undefined {
  const provider = getOAuthProvider(providerId);
  if (!provider) return undefined;
  const stored = storedOAuth(readAuthFile(home), providerId);
  if (!stored) return undefined;
  let credentials: OAuthCredentials = stored;
  let inflight: Promise<string> | undefined;
  /** A refresh that failed, until auth.json changes (`guppy login` again): no retry, no new log line. */
  let failure: { message: string; stamp: string } | undefined;
  let logger: Logger | undefined;
  const seen: { name: string; value: string }[] = [];
  let secretsView: readonly { name: string; value: string }[] = [];
  const secretName = `${AUTH_NAME}:${providerId}`;

  const remember = (c: OAuthCredentials) => {
    const values = [c.access, c.refresh, provider.getApiKey(c)];
    let added = false;
    for (const value of values) {
      if (typeof value !== "string" || seen.some((s) => s.value === value)) continue;
      seen.push({ name: secretName, value });
      added = true;
    }
    // A new array when something changed: the redactor rebuilds its patterns only then.
    if (added) secretsView = seen.slice();
    if (model) pointModel(model, provider, c);
  };
  remember(credentials);

  const fresh = (c: OAuthCredentials) => c.expires - marginMs > Date.now();

  const refresh = (): Promise<string> =>
    withAuthLock(home, async () => {
      // Another process (or `guppy login`) may have written newer credentials meanwhile.
      const onDisk = storedOAuth(readAuthFile(home), providerId);
      if (!onDisk) throw new Error(signedOut(provider, home));
      if (fresh(onDisk)) {
        credentials = onDisk;
      } else {
        let next: OAuthCredentials;
        try {
          next = await provider.refreshToken(onDisk);
        } catch (error) {
          throw new Error(refreshFailed(provider, error));
        }
        writeAuthEntry(home, providerId, next);
        credentials = next;
      }
      remember(credentials);
      return provider.getApiKey(credentials);
    });

  const key = (): string | Promise<string> => {
    if (failure) {
      if (authFileStamp(home) === failure.stamp) throw new Error(failure.message);
      failure = undefined;
    }
    if (fresh(credentials)) return provider.getApiKey(credentials);
    inflight ??= refresh()
      .catch((error: unknown) => {
        const message = error instanceof Error ? error.message : String(error);
        failure = { message, stamp: authFileStamp(home) };
        logger?.error(message);
        throw new Error(message);
      })
      .finally(() => {
        inflight = undefined;
      });
    return inflight;
  };

  return {
    provider: providerId,
    current: () => provider.getApiKey(credentials),
    key,
    secrets: () => secretsView,
    useLogger: (l) => {
      logger = l;
    },
  };
}

/** The name a token is redacted under: `[redacted: auth.json:anthropic]`. */
const AUTH_NAME = "auth.json";

/** Points `model` where the provider says for these credentials (Copilot: the token's endpoint). */
function pointModel(model: Model<Api>, provider: OAuthProviderInterface, c: OAuthCredentials) {
  const modified = provider.modifyModels?.([model], c)[0];
  if (modified && modified !== model) Object.assign(model, { baseUrl: modified.baseUrl });
}

/** One line: what failed, briefly why, and what to run. */
function refreshFailed(provider: OAuthProviderInterface, error: unknown): string {
  const raw = error instanceof Error ? error.message : String(error);
  // pi-ai's messages may carry a response body and a stack: the first clause says enough.
  let why = raw.split("\n")[0]?.split("; stack=")[0] ?? "";
  if (why.length > 200) why = `${why.slice(0, 200)}…`;
  return `The ${provider.name} sign-in could not be refreshed (${why}): run \`guppy login ${provider.id}\` to sign in again.`;
}

function signedOut(provider: OAuthProviderInterface, home: string): string {
  return `Not signed in to ${provider.name} any more (no entry in ${authFilePath(home)}): run \`guppy login ${provider.id}\`.`;
}
