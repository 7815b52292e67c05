import { createInterface } from "node:readline";
import {
  authFilePath,
  readAuthFile,
  signedInProviders,
  storedOAuth,
  withAuthLock,
  writeAuthEntry,
} from "@guppy/core";
import { maskSecret } from "@guppy/core/config";
import { type Api, getModels, getProviders, type Model } from "@mariozechner/pi-ai";
import {
  getOAuthProvider,
  getOAuthProviders,
  type OAuthLoginCallbacks,
} from "@mariozechner/pi-ai/oauth";
import { ExitCode, UsageError } from "../cli/cli-error.js";
import type { CliArgs } from "../cli/parse-cli-args.js";
import { loadCliConfig } from "./load-cli-config.js";

// `guppy login <provider>` / `guppy logout <provider>`: a subscription (Claude Pro/Max, ChatGPT,
// GitHub Copilot) as the model's key, through pi-ai's own OAuth flows; the credentials go to
// <home>/auth.json, which core's resolveModel reads (model/oauth-key.ts refreshes them).

export interface LoginIo {
  home: string;
  /** Where the pasted code (or the Copilot domain) is read from, a line at a time. */
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  signal?: AbortSignal;
}

/**
 * Signs in to `providerId` with pi-ai's flow and stores the credentials in `<home>/auth.json`
 * (mode 600). Prints the URL to open and reads the code pasted back, so it works over ssh with
 * the browser on another machine: the flow's local callback server (127.0.0.1) is only a
 * shortcut for a browser on this one. For `guppy setup` too. Throws UsageError for a provider
 * with no sign-in flow.
 */
export async function runLogin(providerId: string, io: LoginIo): Promise<void> {
  const provider = getOAuthProvider(providerId);
  if (!provider) throw new UsageError(unknownProvider("login", providerId));
  const say = (text: string) => io.output.write(`${text}\n`);
  const lines = lineReader(io.input);
  const ask = async (message: string, allowEmpty = false): Promise<string> => {
    io.output.write(`${message.replace(/:?\s*$/, "")}: `);
    const line = await lines.next();
    if (line === undefined) {
      if (allowEmpty) return "";
      throw new Error(`guppy login ${providerId} stopped: no code was entered (input ended).`);
    }
    return line.trim();
  };
  const callbacks: OAuthLoginCallbacks = {
    onAuth: ({ url, instructions }) => {
      say(
        `Open this address in a browser (on this machine or any other) and sign in:\n\n  ${url}\n`,
      );
      if (instructions && !provider.usesCallbackServer) say(instructions);
    },
    onPrompt: (prompt) => ask(prompt.message, prompt.allowEmpty),
    onProgress: (message) => say(message),
    ...(provider.usesCallbackServer
      ? {
          // The browser ends on http://localhost:…, which only answers on this machine: from
          // anywhere else its address (or the code it shows) is pasted here.
          onManualCodeInput: () =>
            ask(
              "Then paste the code the page shows, or the address of the page the browser ends on\n(a localhost page that does not load is expected on another machine)",
            ),
        }
      : {}),
    ...(io.signal ? { signal: io.signal } : {}),
  };
  try {
    const credentials = await provider.login(callbacks);
    // Under the lock a refresh holds: one finishing now would otherwise write back the old sign-in.
    await withAuthLock(io.home, async () => writeAuthEntry(io.home, provider.id, credentials));
  } finally {
    lines.close();
  }
  const example = exampleModel(provider.id);
  say(
    `Signed in to ${provider.name}: saved in ${authFilePath(io.home)} (mode 600).` +
      (example ? ` Use it with GUPPY_MODEL=${example}.` : ""),
  );
}

/** Removes `providerId`'s sign-in from `<home>/auth.json`; the line to print. */
export async function runLogout(providerId: string, home: string): Promise<string> {
  const known = getOAuthProvider(providerId);
  const had = Object.hasOwn(readAuthFile(home), providerId);
  if (!had && !known) throw new UsageError(unknownProvider("logout", providerId));
  const removed =
    had && (await withAuthLock(home, async () => writeAuthEntry(home, providerId, undefined)));
  if (!removed) {
    return `Not signed in to ${known?.name ?? providerId}: nothing to remove from ${authFilePath(home)}.`;
  }
  return `Signed out of ${known?.name ?? providerId}: removed from ${authFilePath(home)}.`;
}

export async function loginCommand(args: CliArgs): Promise<number> {
  const providerId = providerArgument(args, "login");
  const config = loadCliConfig(args);
  await runLogin(providerId, { home: config.home, input: process.stdin, output: process.stdout });
  // stdin may still be held by the line reader's stream: nothing more is read.
  process.stdin.pause();
  return ExitCode.ok;
}

export async function logoutCommand(args: CliArgs): Promise<number> {
  const providerId = providerArgument(args, "logout");
  const config = loadCliConfig(args);
  process.stdout.write(`${await runLogout(providerId, config.home)}\n`);
  return ExitCode.ok;
}

/**
 * `guppy config`'s lines for the sign-ins in auth.json, tokens masked:
 * `signed in  anthropic  sk-…xy (masked), expires 2026-11-27T18:00:00.000Z  (auth.json)`.
 */
export function signInLines(home: string): string[] {
  let data: ReturnType<typeof readAuthFile>;
  try {
    data = readAuthFile(home);
  } catch (error) {
    return [`signed in: ${(error as Error).message}`];
  }
  return signedInProviders(data).map((id) => {
    const c = storedOAuth(data, id);
    if (!c) return "";
    const expires = new Date(c.expires).toISOString();
    return `signed in  ${id}  ${maskSecret(c.access)}, expires ${expires}  (${authFilePath(home)})`;
  });
}

function providerArgument(args: CliArgs, command: "login" | "logout"): string {
  const [providerId, ...rest] = args.positionals;
  if (providerId === undefined || rest.length > 0) {
    throw new UsageError(
      `guppy ${command} takes one provider: ${oauthProviderIds().join(", ")} (guppy ${command} <provider>)`,
    );
  }
  return providerId;
}

function unknownProvider(command: "login" | "logout", providerId: string): string {
  return `unknown provider "${providerId}" for guppy ${command}: sign-in works for ${oauthProviderIds().join(", ")}`;
}

function oauthProviderIds(): string[] {
  return getOAuthProviders()
    .map((p) => p.id)
    .sort();
}

/** A catalogued model of the provider, for the hint after signing in. */
function exampleModel(providerId: string): string | undefined {
  if (!(getProviders() as string[]).includes(providerId)) return undefined;
  const models = getModels(providerId as never) as Model<Api>[];
  const first = models[0];
  return first ? `${providerId}/${first.id}` : undefined;
}

/**
 * Lines of `input`, one per `next()` (undefined once it ended). Not readline's question(): the
 * Anthropic and Codex flows ask for the pasted code while their callback server may answer
 * first, so a read can stay pending and is dropped by `close()`.
 */
function lineReader(input: NodeJS.ReadableStream): {
  next(): Promise<string | undefined>;
  close(): void;
} {
  const rl = createInterface({ input, terminal: false });
  const lines: string[] = [];
  const waiting: ((line: string | undefined) => void)[] = [];
  let ended = false;
  rl.on("line", (line) => {
    const w = waiting.shift();
    if (w) w(line);
    else lines.push(line);
  });
  rl.on("close", () => {
    ended = true;
    for (const w of waiting.splice(0)) w(undefined);
  });
  return {
    next: () => {
      const line = lines.shift();
      if (line !== undefined) return Promise.resolve(line);
      if (ended) return Promise.resolve(undefined);
      return new Promise((resolve) => waiting.push(resolve));
    },
    close: () => rl.close(),
  };
}
