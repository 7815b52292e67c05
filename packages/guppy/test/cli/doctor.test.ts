import { chmodSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../helpers/free-port.js";
import { type MockLlm, startMockLlm } from "../helpers/mock-llm.js";
import { cleanEnv, runCli, tempHome } from "../helpers/run-cli.js";
import { startServe } from "../serve/serve-harness.js";

/** A key a provider would refuse; the mock refuses every request for the model `refusing`. */
const BAD_KEY = "wrong-key-4f7a";

const mode = (path: string) => statSync(path).mode & 0o777;

// Each test runs guppy doctor up to three times, each a process, a model request and a bwrap
// probe: generous on a loaded machine.
describe("guppy doctor", { timeout: 120_000 }, () => {
  let llm: MockLlm;
  const homes: Array<ReturnType<typeof tempHome>> = [];
  const home = () => {
    const h = tempHome();
    homes.push(h);
    return h.home;
  };
  /** Runs doctor on `dir` against the mock; port 0 so no test depends on 7420 being free. */
  const doctor = (dir: string, extra: Record<string, string> = {}, flags: string[] = []) =>
    runCli(["doctor", ...flags], {
      env: cleanEnv({
        GUPPY_HOME: dir,
        GUPPY_HTTP_PORT: "0",
        ...llm.env("openai-completions"),
        ...extra,
      }),
      timeoutMs: 60_000,
    });

  beforeAll(async () => {
    llm = await startMockLlm(() => ({ content: "ok" }));
    // aimock's matchers do not see headers: the 401 a provider gives a wrong key is the answer
    // for one model id.
    llm.mock.prependFixture({
      match: { predicate: (request) => request.model === "refusing" },
      response: {
        error: { message: "Incorrect API key provided", type: "invalid_request_error" },
        status: 401,
      },
    });
  });
  afterAll(async () => {
    await llm.stop();
    for (const h of homes) h.cleanup();
  });

  it("is all ✓ and exits 0 when the model answers, after one request to it", async () => {
    const dir = home();
    const before = llm.requests().length;
    const r = await doctor(dir);
    expect(r.stderr).toBe("");
    const lines = r.stdout
      .trim()
      .split("\n")
      .filter((l) => !l.startsWith("    "));
    for (const line of lines) expect(line).toMatch(/^✓ /);
    expect(r.stdout).toMatch(/^✓ Node \d+\.\d+/m);
    expect(r.stdout).toMatch(/^✓ permissions: .* yours alone/m);
    expect(r.stdout).toMatch(/^✓ settings: /m);
    expect(r.stdout).toMatch(
      /^✓ model openai\/mock-gpt at http:\/\/127\.0\.0\.1:\d+\/v1 answered in \d+ ms$/m,
    );
    expect(r.stdout).toMatch(/^✓ sandbox: auto → /m);
    expect(r.stdout).toMatch(/^✓ HTTP: /m);
    expect(r.stdout).toMatch(/^✓ disk: .* GB free/m);
    expect(r.code).toBe(0);
    expect(llm.requests().length - before).toBe(1);
  });

  it("is ✗ and exits 1 with an unreachable base URL, naming it", async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/v1`;
    const r = await doctor(home(), { GUPPY_BASE_URL: url });
    const line = r.stdout.split("\n").find((l) => l.startsWith("✗ model"));
    expect(line).toBeDefined();
    expect(line).toContain(url);
    expect(line).toMatch(/ — fix: check the base URL/);
    expect(r.stdout).toMatch(/^✓ settings: /m);
    expect(r.code).toBe(1);
  });

  it("is ✗ and exits 1 when the provider refuses the key (401), saying so", async () => {
    const r = await doctor(home(), { GUPPY_API_KEY: BAD_KEY, GUPPY_MODEL: "openai/refusing" });
    const line = r.stdout.split("\n").find((l) => l.startsWith("✗ model"));
    expect(line).toBeDefined();
    expect(line).toMatch(/401/);
    expect(line).toContain("Incorrect API key provided");
    expect(line).toMatch(/ — fix: set the right key/);
    expect(r.stdout).not.toContain(BAD_KEY);
    expect(r.code).toBe(1);
  });

  it("says a settings.json that does not parse, with its line, and checks no model then", async () => {
    const dir = home();
    writeFileSync(join(dir, "settings.json"), '{ "maxTokens": "lots" }\n');
    const before = llm.requests().length;
    const r = await doctor(dir);
    expect(r.stdout).toMatch(/^✗ settings: .*maxTokens.*settings\.json.* — fix: /m);
    expect(r.stdout).not.toMatch(/model/);
    expect(llm.requests().length).toBe(before);
    expect(r.code).toBe(1);
  });

  it("--fix makes a 755 home and a 644 settings.json 700 and 600, saying what it changed", async () => {
    const dir = home();
    mkdirSync(join(dir, "notes"));
    writeFileSync(join(dir, "settings.json"), "{}\n");
    chmodSync(dir, 0o755);
    chmodSync(join(dir, "notes"), 0o755);
    chmodSync(join(dir, "settings.json"), 0o644);

    const checked = await doctor(dir);
    expect(checked.stdout).toMatch(
      /^✗ permissions: 3 paths in .* can be read by others \(.* 755, notes 755, settings\.json 644\) — fix: guppy doctor --fix/m,
    );
    expect(checked.code).toBe(1);
    expect(mode(dir)).toBe(0o755); // without --fix nothing changes

    const fixed = await doctor(dir, {}, ["--fix"]);
    expect(fixed.stdout).toMatch(/^✓ permissions: .* yours alone \(700\/600\): fixed 3 paths$/m);
    expect(fixed.stdout).toContain(`    ${dir}: 755 → 700`);
    expect(fixed.stdout).toContain(`    ${join(dir, "settings.json")}: 644 → 600`);
    expect(fixed.code).toBe(0);
    expect(mode(dir)).toBe(0o700);
    expect(mode(join(dir, "notes"))).toBe(0o700);
    expect(mode(join(dir, "settings.json"))).toBe(0o600);

    const again = await doctor(dir);
    expect(again.code).toBe(0);
  });

  it("checks a configured Telegram bot's token with getMe (refused → ✗)", async () => {
    const { createServer } = await import("node:http");
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(req.url ?? "");
      const good = req.url === "/bot123:good/getMe";
      res.writeHead(good ? 200 : 401, { "content-type": "application/json" });
      res.end(
        JSON.stringify(
          good
            ? { ok: true, result: { id: 123, is_bot: true, username: "guppy_test_bot" } }
            : { ok: false, error_code: 401, description: "Unauthorized" },
        ),
      );
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const address = server.address();
    const api = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
    try {
      const dir = home();
      const good = await doctor(dir, {
        TELEGRAM_BOT_TOKEN: "123:good",
        GUPPY_TELEGRAM_API_URL: api,
      });
      expect(good.stdout).toMatch(
        /^✓ telegram: bot @guppy_test_bot accepted the token \(getMe\)$/m,
      );
      expect(good.code).toBe(0);
      const bad = await doctor(dir, { TELEGRAM_BOT_TOKEN: "123:bad", GUPPY_TELEGRAM_API_URL: api });
      expect(bad.stdout).toMatch(
        /^✗ telegram: the bot token was refused .*401 Unauthorized.* — fix: /m,
      );
      expect(bad.stdout).not.toContain("123:bad");
      expect(bad.code).toBe(1);
      expect(seen).toEqual(["/bot123:good/getMe", "/bot123:bad/getMe"]);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it("checks Slack's two tokens (auth.test, apps.connections.open) and Discord's (users/@me)", async () => {
    const { createServer } = await import("node:http");
    const seen: string[] = [];
    const server = createServer((req, res) => {
      const auth = req.headers.authorization ?? "";
      seen.push(`${req.method} ${req.url} ${auth.replace(/ .*-(good|bad)$/, " $1")}`);
      const good = auth.endsWith("-good");
      const body =
        req.url === "/discord/users/@me"
          ? good
            ? { id: "1", username: "guppy" }
            : { message: "401: Unauthorized", code: 0 }
          : good
            ? { ok: true, user: "guppy", team: "Home" }
            : { ok: false, error: "invalid_auth" };
      res.writeHead(req.url?.startsWith("/discord") && !good ? 401 : 200, {
        "content-type": "application/json",
      });
      res.end(JSON.stringify(body));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const address = server.address();
    const root = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
    const apis = { SLACK_API_URL: `${root}/slack/`, DISCORD_API_URL: `${root}/discord` };
    try {
      const dir = home();
      const good = await doctor(dir, {
        ...apis,
        SLACK_BOT_TOKEN: "xoxb-good",
        SLACK_APP_TOKEN: "xapp-good",
        DISCORD_BOT_TOKEN: "d-good",
      });
      expect(good.stdout).toMatch(/^✓ slack: bot @guppy in Home accepted both tokens$/m);
      expect(good.stdout).toMatch(/^✓ discord: the bot token is accepted$/m);
      expect(good.code).toBe(0);
      const bad = await doctor(dir, {
        ...apis,
        SLACK_BOT_TOKEN: "xoxb-good",
        SLACK_APP_TOKEN: "xapp-bad",
        DISCORD_BOT_TOKEN: "d-bad",
      });
      expect(bad.stdout).toMatch(
        /^✗ slack: the app token was refused \(apps\.connections\.open: invalid_auth\) — fix: .*SLACK_APP_TOKEN$/m,
      );
      expect(bad.stdout).toMatch(
        /^✗ discord: the bot token was refused \(401\) — fix: .*DISCORD_BOT_TOKEN$/m,
      );
      expect(bad.code).toBe(1);
      expect(seen.sort()).toEqual(
        [
          "GET /discord/users/@me Bot good",
          "GET /discord/users/@me Bot bad",
          "POST /slack/auth.test Bearer good",
          "POST /slack/auth.test Bearer good",
          "POST /slack/apps.connections.open Bearer good",
          "POST /slack/apps.connections.open Bearer bad",
        ].sort(),
      );
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it("finds this home's running gateway answering, and the port taken when another home's gateway holds it", async () => {
    const dir = home();
    const serve = await startServe(dir, llm.env("openai-completions"));
    try {
      const r = await doctor(dir);
      expect(r.stdout).toContain(
        `✓ HTTP: the gateway of this home (pid ${serve.child.pid}) answers at ${serve.url}\n`,
      );
      expect(r.code).toBe(0);
      // Another home on the same port: taken, and by a guppy gateway.
      const port = new URL(serve.url).port;
      const other = await doctor(home(), { GUPPY_HTTP_PORT: port });
      expect(other.stdout).toMatch(
        new RegExp(
          `^✗ HTTP: 127\\.0\\.0\\.1:${port} is taken by another home's guppy gateway — fix: `,
          "m",
        ),
      );
      expect(other.code).toBe(1);
    } finally {
      serve.child.kill("SIGTERM");
      await serve.exited;
    }
  });
});
