import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import {
  type OAuthCredentials,
  type OAuthLoginCallbacks,
  registerOAuthProvider,
  unregisterOAuthProvider,
} from "@mariozechner/pi-ai/oauth";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runLogin, runLogout, signInLines } from "../../src/commands/login-command.js";
import { startMockLlm } from "../helpers/mock-llm.js";
import { cleanEnv, runCli } from "../helpers/run-cli.js";

const ACCESS = "standin-login-access-0123456789";
const REFRESH = "standin-login-refresh-0123456789";

/**
 * A local token endpoint: exchanges the code "good-code" (or a redirect URL carrying it) for
 * tokens; anything else is refused.
 */
async function startTokenEndpoint() {
  const codes: string[] = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => {
      body += d;
    });
    req.on("end", () => {
      const code = String(JSON.parse(body).code);
      codes.push(code);
      if (code !== "good-code") {
        res.writeHead(400, { "content-type": "application/json" });
        res.end('{"error":"invalid_grant"}');
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ access_token: ACCESS, refresh_token: REFRESH, expires_in: 3600 }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    codes,
    stop: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** What a flow's code exchange does with what the user pasted (a code, or the redirect URL). */
function codeFrom(pasted: string): string {
  try {
    return new URL(pasted).searchParams.get("code") ?? pasted;
  } catch {
    return pasted;
  }
}

describe("guppy login with a stand-in OAuth provider (in process)", () => {
  let home: string;
  let endpoint: Awaited<ReturnType<typeof startTokenEndpoint>>;

  beforeEach(async () => {
    home = mkdtempSync(join(tmpdir(), "guppy-login-"));
    endpoint = await startTokenEndpoint();
    const exchange = async (pasted: string): Promise<OAuthCredentials> => {
      const response = await fetch(`${endpoint.url}/token`, {
        method: "POST",
        body: JSON.stringify({ code: codeFrom(pasted) }),
      });
      if (!response.ok) throw new Error(`token exchange failed (${response.status})`);
      const data = (await response.json()) as { access_token: string; refresh_token: string };
      return {
        access: data.access_token,
        refresh: data.refresh_token,
        expires: Date.now() + 3.6e6,
      };
    };
    // Like Anthropic's and Codex's flows: a URL to open, then the code pasted back.
    registerOAuthProvider({
      id: "standin",
      name: "Stand-in (Pro)",
      usesCallbackServer: true,
      login: async (callbacks: OAuthLoginCallbacks) => {
        callbacks.onAuth({ url: `${endpoint.url}/authorize?client_id=guppy` });
        const pasted = callbacks.onManualCodeInput
          ? await callbacks.onManualCodeInput()
          : await callbacks.onPrompt({ message: "Paste the code:" });
        return exchange(pasted);
      },
      refreshToken: async (c) => c,
      getApiKey: (c) => c.access,
    });
    // Like Copilot's: an optional domain asked first, then a device code to enter elsewhere.
    registerOAuthProvider({
      id: "standin-device",
      name: "Stand-in Device",
      login: async (callbacks: OAuthLoginCallbacks) => {
        const domain = await callbacks.onPrompt({
          message: "Enterprise domain (blank for none)",
          allowEmpty: true,
        });
        callbacks.onAuth({ url: `${endpoint.url}/device`, instructions: "Enter code: ABCD-1234" });
        callbacks.onProgress?.(`domain "${domain}"`);
        return exchange("good-code");
      },
      refreshToken: async (c) => c,
      getApiKey: (c) => c.access,
    });
  });
  afterEach(async () => {
    unregisterOAuthProvider("standin");
    unregisterOAuthProvider("standin-device");
    await endpoint.stop();
    rmSync(home, { recursive: true, force: true });
  });

  const io = (typed: string) => {
    const input = new PassThrough();
    const output = new PassThrough();
    let printed = "";
    output.on("data", (d) => {
      printed += d;
    });
    input.end(typed);
    return { input, output, printed: () => printed };
  };

  it("prints the address, takes the pasted redirect URL and writes auth.json with mode 600", async () => {
    const t = io("http://localhost:53692/callback?code=good-code&state=xyz\n");
    await runLogin("standin", { home, input: t.input, output: t.output });
    expect(t.printed()).toContain(`${endpoint.url}/authorize?client_id=guppy`);
    expect(t.printed()).toContain("paste");
    expect(t.printed()).toContain("Signed in to Stand-in (Pro)");
    expect(endpoint.codes).toEqual(["good-code"]);
    const path = join(home, "auth.json");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(readFileSync(path, "utf8"));
    expect(stored.standin).toMatchObject({ type: "oauth", access: ACCESS, refresh: REFRESH });
    expect(stored.standin.expires).toBeGreaterThan(Date.now());
    // The token is never printed.
    expect(t.printed()).not.toContain(ACCESS);
  });

  it("keeps the other entries of auth.json, and logout removes only its own", async () => {
    writeFileSync(
      join(home, "auth.json"),
      JSON.stringify({ other: { type: "api_key", key: "k" } }),
    );
    await runLogin("standin", { home, ...io("good-code\n") });
    const both = JSON.parse(readFileSync(join(home, "auth.json"), "utf8"));
    expect(Object.keys(both).sort()).toEqual(["other", "standin"]);
    expect(signInLines(home)).toHaveLength(1);
    expect(signInLines(home)[0]).toMatch(/^signed in {2}standin {2}sta…89 \(masked\), expires /);
    expect(signInLines(home)[0]).not.toContain(ACCESS);

    expect(await runLogout("standin", home)).toContain("Signed out of Stand-in (Pro)");
    const left = JSON.parse(readFileSync(join(home, "auth.json"), "utf8"));
    expect(Object.keys(left)).toEqual(["other"]);
    expect(statSync(join(home, "auth.json")).mode & 0o777).toBe(0o600);
    expect(await runLogout("standin", home)).toContain("Not signed in to Stand-in (Pro)");
  });

  it("a device-code flow shows the code to enter and takes a blank domain", async () => {
    const t = io("\n");
    await runLogin("standin-device", { home, input: t.input, output: t.output });
    expect(t.printed()).toContain(`${endpoint.url}/device`);
    expect(t.printed()).toContain("Enter code: ABCD-1234");
    expect(t.printed()).toContain('domain ""');
    expect(JSON.parse(readFileSync(join(home, "auth.json"), "utf8"))["standin-device"].access).toBe(
      ACCESS,
    );
  });

  it("a refused code or no code writes nothing", async () => {
    await expect(runLogin("standin", { home, ...io("bad-code\n") })).rejects.toThrow(
      /token exchange failed \(400\)/,
    );
    await expect(runLogin("standin", { home, ...io("") })).rejects.toThrow(
      /guppy login standin stopped: no code was entered/,
    );
    expect(() => statSync(join(home, "auth.json"))).toThrow();
  });

  it("an unknown provider is one line listing those that have a sign-in", async () => {
    await expect(runLogin("nope", { home, ...io("") })).rejects.toThrow(
      /^unknown provider "nope" for guppy login: sign-in works for anthropic, github-copilot, openai-codex, standin, standin-device$/,
    );
  });
});

describe("guppy login / logout / config (CLI)", () => {
  let home: string;
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), "guppy-login-cli-"));
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it("names the providers on a mistake, in one line, exit 2", async () => {
    const env = cleanEnv({ GUPPY_HOME: home });
    const unknown = await runCli(["login", "nope"], { env });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe(
      'guppy: unknown provider "nope" for guppy login: sign-in works for anthropic, github-copilot, openai-codex\n',
    );
    const none = await runCli(["logout"], { env });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("guppy logout takes one provider: anthropic, github-copilot");
    const help = await runCli(["login", "--help"], { env });
    expect(help.stdout).toContain("guppy login anthropic|openai-codex|github-copilot");
  });

  it("guppy login anthropic prints pi-ai's address and waits for the code on stdin", async () => {
    // Input ends without a code: nothing is sent anywhere and nothing is written.
    const out = await runCli(["login", "anthropic"], { env: cleanEnv({ GUPPY_HOME: home }) });
    expect(out.stdout).toContain("https://claude.ai/oauth/authorize?");
    expect(out.stdout).toContain("paste the code");
    expect(out.stderr).toBe(
      "guppy: guppy login anthropic stopped: no code was entered (input ended).\n",
    );
    expect(out.code).toBe(1);
    expect(() => statSync(join(home, "auth.json"))).toThrow();
  });

  it("logout removes a sign-in and config shows each one masked", async () => {
    const env = cleanEnv({ GUPPY_HOME: home });
    const expires = Date.parse("2030-01-01T00:00:00Z");
    writeFileSync(
      join(home, "auth.json"),
      JSON.stringify({
        anthropic: { type: "oauth", access: ACCESS, refresh: REFRESH, expires },
      }),
      { mode: 0o600 },
    );
    const config = await runCli(["config"], { env });
    expect(config.code).toBe(0);
    expect(config.stdout).toContain(
      `signed in  anthropic  sta…89 (masked), expires 2030-01-01T00:00:00.000Z  (${join(home, "auth.json")})`,
    );
    expect(config.stdout).not.toContain(ACCESS);
    expect(config.stdout).not.toContain(REFRESH);
    const out = await runCli(["logout", "anthropic"], { env });
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("Signed out of Anthropic (Claude Pro/Max)");
    expect(JSON.parse(readFileSync(join(home, "auth.json"), "utf8"))).toEqual({});
    expect((await runCli(["config"], { env })).stdout).not.toContain("signed in");
  });
});

describe("guppy chat on a sign-in (CLI, aimock as Anthropic's endpoint)", () => {
  it("sends the signed-in token as the key (never in the body) with no key variable set", async () => {
    const home = mkdtempSync(join(tmpdir(), "guppy-login-chat-"));
    const llm = await startMockLlm(() => ({ content: "hello from the subscription" }));
    try {
      // An Anthropic sign-in's token, fresh: no refresh (that would go to Anthropic).
      const token = "sk-ant-oat01-standin-0123456789abcdef";
      writeFileSync(
        join(home, "auth.json"),
        JSON.stringify({
          anthropic: {
            type: "oauth",
            access: token,
            refresh: REFRESH,
            expires: Date.now() + 3.6e6,
          },
        }),
        { mode: 0o600 },
      );
      const env = cleanEnv({
        GUPPY_HOME: home,
        GUPPY_MODEL: "anthropic/mock-claude",
        GUPPY_BASE_URL: llm.url,
        GUPPY_API: "anthropic-messages",
        GUPPY_SANDBOX: "host",
      });
      const out = await runCli(["chat", "-m", "hi"], { env, timeoutMs: 60_000 });
      expect(out.stderr).toBe("");
      expect(out.stdout).toBe("hello from the subscription\n");
      const sent = llm.mock.getRequests().filter((r) => r.path.endsWith("/messages"));
      expect(sent).toHaveLength(1);
      // pi-ai sends an Anthropic OAuth token as a bearer token with the OAuth beta (aimock's
      // journal masks the Authorization header itself); an API key would go as x-api-key.
      expect(sent[0]?.headers["anthropic-beta"]).toContain("oauth-2025-04-20");
      expect(sent[0]?.headers.authorization).toBeDefined();
      expect(sent[0]?.headers["x-api-key"]).toBeUndefined();
      expect(JSON.stringify(sent[0]?.body)).not.toContain(token);
    } finally {
      await llm.stop();
      rmSync(home, { recursive: true, force: true });
    }
  });
});
