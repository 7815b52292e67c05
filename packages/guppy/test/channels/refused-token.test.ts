import { writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MockLlm, startMockLlm } from "../helpers/mock-llm.js";
import { cleanEnv, runCli, tempHome } from "../helpers/run-cli.js";
import { startTelegramEmulator } from "./helpers/telegram-emulator.js";

/** `guppy serve` with `env`, which is expected to stop at once; its exit code and stderr. */
async function serveFails(home: string, env: Record<string, string>) {
  const result = await runCli(["serve"], {
    env: cleanEnv({ GUPPY_HOME: home, GUPPY_HTTP_PORT: "0", ...env }),
    timeoutMs: 20_000,
  });
  return { code: result.code, stderr: result.stderr.trim() };
}

describe("a chat platform refusing guppy's token at start", () => {
  let llm: MockLlm;
  beforeAll(async () => {
    llm = await startMockLlm(() => ({ content: "unused" }));
  });
  afterAll(async () => {
    await llm.stop();
  });

  it("Telegram: one line naming TELEGRAM_BOT_TOKEN (or the settings.json key), exit 2", async () => {
    const tg = await startTelegramEmulator();
    const { home, cleanup } = tempHome();
    try {
      for (const method of ["getMe", "deleteWebhook"]) {
        tg.failNext({ method, times: 10, status: 401, description: "Unauthorized" });
      }
      const env = { ...llm.env("openai-completions"), GUPPY_TELEGRAM_API_URL: tg.apiUrl };
      const fromEnv = await serveFails(home, { ...env, TELEGRAM_BOT_TOKEN: tg.token });
      expect(fromEnv).toEqual({
        code: 2,
        stderr: "guppy: Telegram refused the bot token (TELEGRAM_BOT_TOKEN): 401 Unauthorized",
      });
      const settings = join(home, "settings.json");
      writeFileSync(settings, JSON.stringify({ telegramBotToken: tg.token }));
      const fromFile = await serveFails(home, env);
      expect(fromFile.code).toBe(2);
      expect(fromFile.stderr).toBe(
        `guppy: Telegram refused the bot token ("telegramBotToken" in ${settings}): 401 Unauthorized`,
      );
    } finally {
      await tg.stop();
      cleanup();
    }
  });

  it("Slack: one line naming SLACK_APP_TOKEN when Socket Mode is refused, exit 2", async () => {
    // Slack's Web API as guppy sees it with tokens Slack does not accept.
    const methods: string[] = [];
    const slack: Server = createServer((req, res) => {
      methods.push(String(req.url));
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ ok: false, error: "invalid_auth" }));
    });
    await new Promise<void>((r) => slack.listen(0, "127.0.0.1", r));
    const address = slack.address();
    const port = typeof address === "object" && address ? address.port : 0;
    const { home, cleanup } = tempHome();
    try {
      const result = await serveFails(home, {
        ...llm.env("openai-completions"),
        SLACK_BOT_TOKEN: "xoxb-not-a-token",
        SLACK_APP_TOKEN: "xapp-not-a-token",
        // The adapter's own setting for the Web API root.
        SLACK_API_URL: `http://127.0.0.1:${port}/api/`,
      });
      expect(methods).toContain("/api/apps.connections.open");
      expect(result.code).toBe(2);
      expect(result.stderr.split("\n").at(-1)).toBe(
        "guppy: Slack refused the app-level token (SLACK_APP_TOKEN): invalid_auth",
      );
    } finally {
      await new Promise((r) => slack.close(r));
      cleanup();
    }
  });

  it("Discord: one line naming DISCORD_BOT_TOKEN (or the settings.json key), exit 2", async () => {
    // Discord's REST API as guppy sees it with a token Discord does not know.
    const requests: string[] = [];
    const discord: Server = createServer((req, res) => {
      requests.push(`${req.method} ${req.url} ${req.headers.authorization}`);
      res.writeHead(401, { "content-type": "application/json" });
      res.end(JSON.stringify({ message: "401: Unauthorized", code: 0 }));
    });
    await new Promise<void>((r) => discord.listen(0, "127.0.0.1", r));
    const address = discord.address();
    const port = typeof address === "object" && address ? address.port : 0;
    const { home, cleanup } = tempHome();
    try {
      const env = {
        ...llm.env("openai-completions"),
        DISCORD_APPLICATION_ID: "1234567890",
        // The adapter's own setting for the REST API root.
        DISCORD_API_URL: `http://127.0.0.1:${port}/api/v10`,
      };
      const fromEnv = await serveFails(home, { ...env, DISCORD_BOT_TOKEN: "not-a-token" });
      expect(fromEnv).toEqual({
        code: 2,
        stderr: "guppy: Discord refused the bot token (DISCORD_BOT_TOKEN): 401 Unauthorized",
      });
      // One check, and no Gateway login after it.
      expect(requests).toEqual(["GET /api/v10/users/@me Bot not-a-token"]);
      const settings = join(home, "settings.json");
      writeFileSync(settings, JSON.stringify({ discordBotToken: "not-a-token" }));
      const fromFile = await serveFails(home, env);
      expect(fromFile.code).toBe(2);
      expect(fromFile.stderr).toBe(
        `guppy: Discord refused the bot token ("discordBotToken" in ${settings}): 401 Unauthorized`,
      );
    } finally {
      await new Promise((r) => discord.close(r));
      cleanup();
    }
  });

  it("Discord unreachable at start: an ordinary failure (exit 1), not a configuration error", async () => {
    // A port nothing listens on: taken, then freed.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    const address = probe.address();
    const port = typeof address === "object" && address ? address.port : 0;
    await new Promise((r) => probe.close(r));
    const { home, cleanup } = tempHome();
    try {
      const result = await serveFails(home, {
        ...llm.env("openai-completions"),
        DISCORD_BOT_TOKEN: "a-token",
        DISCORD_APPLICATION_ID: "1234567890",
        DISCORD_API_URL: `http://127.0.0.1:${port}/api/v10`,
      });
      expect(result.code).toBe(1);
      expect(result.stderr.split("\n").at(-1)).toMatch(
        /^guppy: Could not reach Discord to check the bot token \(GET http:\/\/127\.0\.0\.1:\d+\/api\/v10\/users\/@me\): .*ECONNREFUSED/,
      );
    } finally {
      cleanup();
    }
  });
});
