import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import {
  type OAuthCredentials,
  registerOAuthProvider,
  unregisterOAuthProvider,
} from "@mariozechner/pi-ai/oauth";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Logger } from "../../src/logging/logger.js";
import { createRedactor, redactLogger } from "../../src/logging/redact.js";
import { AUTH_FILE } from "../../src/model/auth-file.js";
import { type ResolvedModel, resolveModel } from "../../src/model/resolve-model.js";
import { createThreadRunner } from "../../src/runner/create-thread-runner.js";
import { configuredSecrets } from "../../src/sandbox/host-sandbox.js";
import { loadConfig } from "../../src/settings.js";
import { createStore } from "../../src/store/create-store.js";
import { tempHome } from "../helpers/temp-home.js";

const PROVIDER = "standin";
const OLD_ACCESS = "standin-access-OLD-0123456789";
const OLD_REFRESH = "standin-refresh-OLD-0123456789";
const NEW_ACCESS = "standin-access-NEW-9876543210";
const NEW_REFRESH = "standin-refresh-NEW-9876543210";

/**
 * One local server for both ends: the stand-in's token endpoint (/token, counted) and a Chat
 * Completions model (/v1/chat/completions) that records each request's Authorization header and
 * body. A request whose user text is "tools" gets `toolCalls` first, then "done".
 */
function startServer() {
  const state = {
    tokenHits: 0,
    tokenBodies: [] as string[],
    refreshFails: false,
    /** Held until released, so concurrent refreshes would overlap. */
    tokenDelayMs: 100,
    auth: [] as string[],
    bodies: [] as string[],
    toolCalls: [] as { name: string; args: object }[],
  };
  const handle = (req: IncomingMessage, res: ServerResponse, body: string) => {
    if (req.url === "/token") {
      state.tokenHits++;
      state.tokenBodies.push(body);
      setTimeout(() => {
        if (state.refreshFails) {
          res.writeHead(400, { "content-type": "application/json" });
          res.end('{"error":"invalid_grant"}');
          return;
        }
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            access_token: NEW_ACCESS,
            refresh_token: NEW_REFRESH,
            expires_in: 3600,
          }),
        );
      }, state.tokenDelayMs);
      return;
    }
    state.auth.push(String(req.headers.authorization));
    state.bodies.push(body);
    const request = JSON.parse(body) as { messages: { role: string; content: unknown }[] };
    const last = request.messages.at(-1);
    const wantsTools =
      last?.role === "user" && JSON.stringify(last.content).includes("tools") && state.toolCalls;
    res.writeHead(200, { "content-type": "text/event-stream" });
    const chunk = (delta: object, finish: string | null) =>
      `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    if (wantsTools && state.toolCalls.length > 0) {
      res.write(
        chunk(
          {
            role: "assistant",
            tool_calls: state.toolCalls.map((c, index) => ({
              index,
              id: `call_${index}`,
              type: "function",
              function: { name: c.name, arguments: JSON.stringify(c.args) },
            })),
          },
          null,
        ),
      );
      res.write(chunk({}, "tool_calls"));
    } else {
      res.write(chunk({ role: "assistant", content: last?.role === "tool" ? "done" : "ok" }, null));
      res.write(chunk({}, "stop"));
    }
    res.end("data: [DONE]\n\n");
  };
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => {
      body += d;
    });
    req.on("end", () => handle(req, res, body));
  });
  return {
    state,
    server,
    async start() {
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

describe("a subscription's sign-in as the model's key (auth.json, stand-in OAuth provider)", () => {
  let t: ReturnType<typeof tempHome>;
  let srv: ReturnType<typeof startServer>;
  let url: string;
  const logged: string[] = [];
  const logger: Logger = {
    debug: () => {},
    info: (m, f) => logged.push(`info ${m} ${JSON.stringify(f ?? {})}`),
    warn: (m, f) => logged.push(`warn ${m} ${JSON.stringify(f ?? {})}`),
    error: (m, f) => logged.push(`error ${m} ${JSON.stringify(f ?? {})}`),
  };

  beforeEach(async () => {
    t = tempHome();
    logged.length = 0;
    srv = startServer();
    url = await srv.start();
    registerOAuthProvider({
      id: PROVIDER,
      name: "Stand-in",
      login: async () => {
        throw new Error("not used here");
      },
      refreshToken: async (c: OAuthCredentials): Promise<OAuthCredentials> => {
        const response = await fetch(`${url}/token`, {
          method: "POST",
          body: JSON.stringify({ refresh_token: c.refresh }),
        });
        if (!response.ok) throw new Error(`token endpoint said ${response.status}`);
        const data = (await response.json()) as {
          access_token: string;
          refresh_token: string;
          expires_in: number;
        };
        return {
          access: data.access_token,
          refresh: data.refresh_token,
          expires: Date.now() + data.expires_in * 1000,
        };
      },
      getApiKey: (c) => c.access,
    });
  });
  afterEach(async () => {
    unregisterOAuthProvider(PROVIDER);
    await srv.stop();
    t.cleanup();
  });

  const writeAuth = (expires: number, access = OLD_ACCESS, refresh = OLD_REFRESH) =>
    t.write(
      AUTH_FILE,
      JSON.stringify({ [PROVIDER]: { type: "oauth", access, refresh, expires } }, null, 2),
    );
  const authOnDisk = () =>
    JSON.parse(readFileSync(join(t.home, AUTH_FILE), "utf8"))[PROVIDER] as OAuthCredentials;

  const config = (extra: Record<string, string> = {}) =>
    loadConfig({
      env: {
        GUPPY_MODEL: `${PROVIDER}/m`,
        GUPPY_BASE_URL: `${url}/v1`,
        GUPPY_API: "openai-completions",
        GUPPY_TIMEZONE: "UTC",
        GUPPY_MAX_RETRIES: "0",
        ...extra,
      },
      home: t.home,
    });

  /** A thread runner as `guppy serve` makes one: one redactor shared by store, log and tools. */
  const runnerFor = (
    cfg: ReturnType<typeof config>,
    resolved: ResolvedModel,
    threadId = "cli:local:default",
  ) => {
    const redactor = createRedactor(configuredSecrets(cfg, resolved), resolved.oauth?.secrets);
    return createThreadRunner({
      threadId,
      config: cfg,
      resolved,
      store: createStore({ home: t.home, redactor }),
      logger: redactLogger(logger, redactor),
      redactor,
    });
  };

  it("resolves a signed-in provider to a per-request key, marked as a subscription", async () => {
    writeAuth(Date.now() + 3_600_000);
    const resolved = await resolveModel(config());
    expect(resolved.subscription).toBe(true);
    expect(resolved.apiKey).toBe(OLD_ACCESS);
    expect(await resolved.getApiKey?.()).toBe(OLD_ACCESS);
    // An explicit key wins over the sign-in.
    const keyed = await resolveModel(config({ GUPPY_API_KEY: "explicit-key-123" }));
    expect(keyed.subscription).toBeUndefined();
    expect(keyed.getApiKey).toBeUndefined();
    expect(keyed.apiKey).toBe("explicit-key-123");
    // No auth.json: no sign-in.
    const other = tempHome();
    try {
      const plain = await resolveModel({ ...config(), home: other.home });
      expect(plain.subscription).toBeUndefined();
    } finally {
      other.cleanup();
    }
  });

  it("refreshes an expired token before the request, and writes the new credentials (600)", async () => {
    writeAuth(Date.now() - 1000);
    const cfg = config();
    const resolved = await resolveModel(cfg);
    const result = await runnerFor(cfg, resolved).prompt({ text: "hello" });
    expect(result.stopReason).toBe("stop");
    expect(srv.state.tokenHits).toBe(1);
    expect(srv.state.tokenBodies[0]).toContain(OLD_REFRESH);
    expect(srv.state.auth).toEqual([`Bearer ${NEW_ACCESS}`]);
    const stored = authOnDisk();
    expect(stored.access).toBe(NEW_ACCESS);
    expect(stored.refresh).toBe(NEW_REFRESH);
    expect(stored.expires).toBeGreaterThan(Date.now());
    expect(statSync(join(t.home, AUTH_FILE)).mode & 0o777).toBe(0o600);
    // Fresh now: the next request uses it without asking the token endpoint again.
    await runnerFor(cfg, resolved).prompt({ text: "again" });
    expect(srv.state.tokenHits).toBe(1);
    expect(srv.state.auth[1]).toBe(`Bearer ${NEW_ACCESS}`);
  });

  it("refreshes a token inside the margin (4 minutes left) too", async () => {
    writeAuth(Date.now() + 4 * 60_000);
    const cfg = config();
    await runnerFor(cfg, await resolveModel(cfg)).prompt({ text: "hello" });
    expect(srv.state.tokenHits).toBe(1);
    expect(srv.state.auth).toEqual([`Bearer ${NEW_ACCESS}`]);
  });

  it("twenty concurrent runs at expiry refresh once", async () => {
    writeAuth(Date.now() - 1000);
    srv.state.tokenDelayMs = 300;
    const cfg = config();
    const resolved = await resolveModel(cfg);
    const runs = Array.from({ length: 20 }, (_, i) =>
      runnerFor(cfg, resolved, `cli:local:t${i}`).prompt({ text: `hello ${i}` }),
    );
    const results = await Promise.all(runs);
    expect(results.map((r) => r.stopReason)).toEqual(Array(20).fill("stop"));
    expect(srv.state.tokenHits).toBe(1);
    expect(srv.state.auth).toEqual(Array(20).fill(`Bearer ${NEW_ACCESS}`));
  });

  it("two sign-in sessions (as two guppy processes) at expiry refresh once, through the lock", async () => {
    writeAuth(Date.now() - 1000);
    srv.state.tokenDelayMs = 300;
    const cfg = config();
    const [a, b] = [await resolveModel(cfg), await resolveModel(cfg)];
    const keys = await Promise.all([a.getApiKey?.(), b.getApiKey?.(), a.getApiKey?.()]);
    expect(keys).toEqual([NEW_ACCESS, NEW_ACCESS, NEW_ACCESS]);
    expect(srv.state.tokenHits).toBe(1);
    expect(readdirSync(t.home)).not.toContain(`${AUTH_FILE}.lock`);
  });

  it("uses credentials another process refreshed meanwhile instead of refreshing again", async () => {
    writeAuth(Date.now() - 1000);
    const cfg = config();
    const resolved = await resolveModel(cfg);
    // Another guppy process refreshed: auth.json holds fresh credentials now.
    writeAuth(Date.now() + 3_600_000, "other-process-access-123", "other-process-refresh-123");
    expect(await resolved.getApiKey?.()).toBe("other-process-access-123");
    expect(srv.state.tokenHits).toBe(0);
  });

  it("a failed refresh fails the run with what to run, logged once, retried once auth.json changes", async () => {
    writeAuth(Date.now() - 1000);
    srv.state.refreshFails = true;
    const cfg = config();
    const resolved = await resolveModel(cfg);
    const first = await runnerFor(cfg, resolved).prompt({ text: "hello" });
    expect(first.stopReason).toBe("error");
    expect(first.errorMessage).toContain("run `guppy login standin`");
    expect(first.errorMessage).toContain("token endpoint said 400");
    expect(first.errorMessage).not.toContain("\n");
    const second = await runnerFor(cfg, resolved, "cli:local:other").prompt({ text: "hello" });
    expect(second.errorMessage).toBe(first.errorMessage);
    // Not asked again, no request made, one log line.
    expect(srv.state.tokenHits).toBe(1);
    expect(srv.state.auth).toEqual([]);
    const lines = logged.filter((l) => l.includes("guppy login standin"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^error /);
    // `guppy login` wrote new credentials: the next request uses them.
    srv.state.refreshFails = false;
    writeAuth(Date.now() + 3_600_000, "signed-in-again-access-1", "signed-in-again-refresh-1");
    const third = await runnerFor(cfg, resolved).prompt({ text: "hello" });
    expect(third.stopReason).toBe("stop");
    expect(srv.state.auth).toEqual(["Bearer signed-in-again-access-1"]);
  });

  it("the tokens never reach a tool result, a log line, a stored file or a request body", async () => {
    writeAuth(Date.now() - 1000);
    const authPath = join(t.home, AUTH_FILE);
    srv.state.toolCalls = [
      // Host mode: bash can read the file; what it prints is redacted.
      { name: "bash", args: { command: `cat ${authPath}; echo; echo OLD=${OLD_ACCESS}` } },
      // The file tools refuse it outright.
      { name: "read", args: { path: authPath } },
    ];
    const cfg = config();
    const resolved = await resolveModel(cfg);
    const result = await runnerFor(cfg, resolved).prompt({ text: "tools" });
    expect(result.stopReason).toBe("stop");
    expect(srv.state.tokenHits).toBe(1);
    expect(srv.state.bodies.length).toBeGreaterThanOrEqual(2);
    const toolRound = srv.state.bodies.at(-1) ?? "";
    expect(toolRound).toContain("[redacted: auth.json:standin]");
    expect(toolRound).toContain("guppy's sign-ins");
    const tokens = [OLD_ACCESS, OLD_REFRESH, NEW_ACCESS, NEW_REFRESH];
    for (const token of tokens) {
      for (const body of srv.state.bodies) expect(body).not.toContain(token);
      for (const line of logged) expect(line).not.toContain(token);
    }
    // Everything guppy stored under its home, except auth.json itself.
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)],
      );
    const stored = files(t.home).filter((f) => f !== authPath);
    expect(stored.length).toBeGreaterThan(0);
    for (const file of stored) {
      const text = readFileSync(file, "utf8");
      for (const token of tokens) expect(text, file).not.toContain(token);
    }
  });

  it("an auth.json that is not JSON is one line naming it", async () => {
    writeFileSync(join(t.home, AUTH_FILE), "{not json");
    await expect(resolveModel(config())).rejects.toThrow(/auth\.json is not a JSON object/);
  });
});
