import { createServer, type Server } from "node:http";
import type { Logger } from "@guppy/core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createDiscordChannel } from "../../src/channels/discord/create-discord-channel.js";
import { discord } from "../../src/channels/discord/descriptor.js";
import { type MockLlm, startMockLlm } from "../helpers/mock-llm.js";
import { startRuntime } from "../helpers/test-runtime.js";

/** Gateway sessions started; each ends at once, as the adapter's does when the login fails. */
const sessions = vi.hoisted(() => ({ count: 0 }));

// The real adapter, but with a Gateway listener whose login fails: the adapter catches that,
// logs it and ends the session normally.
vi.mock("@chat-adapter/discord", async (importOriginal) => {
  const actual = await importOriginal<typeof import("@chat-adapter/discord")>();
  return {
    ...actual,
    createDiscordAdapter: (config: Parameters<typeof actual.createDiscordAdapter>[0]) => {
      const adapter = actual.createDiscordAdapter(config);
      adapter.startGatewayListener = async (options) => {
        sessions.count += 1;
        options.waitUntil?.(Promise.resolve());
        return new Response("{}");
      };
      return adapter;
    },
  };
});

describe("Discord: a bot token revoked after the start", () => {
  let llm: MockLlm;
  let api: Server;
  const checks: string[] = [];
  beforeAll(async () => {
    llm = await startMockLlm(() => ({ content: "unused" }));
    // Discord's REST API: the token is accepted at start, refused from then on.
    api = createServer((req, res) => {
      checks.push(String(req.url));
      const accepted = checks.length === 1;
      res.writeHead(accepted ? 200 : 401, { "content-type": "application/json" });
      res.end(
        JSON.stringify(accepted ? { id: "1234567890" } : { message: "401: Unauthorized", code: 0 }),
      );
    });
    await new Promise<void>((r) => api.listen(0, "127.0.0.1", r));
    const address = api.address();
    const port = typeof address === "object" && address ? address.port : 0;
    process.env.DISCORD_API_URL = `http://127.0.0.1:${port}/api/v10`;
  });
  afterAll(async () => {
    delete process.env.DISCORD_API_URL;
    await new Promise((r) => api.close(r));
    await llm.stop();
  });

  it("is logged as an error naming DISCORD_BOT_TOKEN, once per wait, and stop() does not wait it out", async () => {
    const runtime = await startRuntime(llm, {
      DISCORD_BOT_TOKEN: "revoked-later",
      DISCORD_APPLICATION_ID: "1234567890",
    });
    const errors: string[] = [];
    const logger: Logger = {
      debug: () => {},
      info: () => {},
      warn: (message) => errors.push(`warn: ${message}`),
      error: (message) => errors.push(message),
    };
    const channel = createDiscordChannel(discord);
    try {
      await channel.start({ ...runtime.context, logger });
      await vi.waitFor(() => expect(errors).toHaveLength(1));
      // Well inside the first wait (5 s): no second login, no second line.
      await new Promise((r) => setTimeout(r, 300));
      expect(sessions.count).toBe(1);
      expect(checks).toEqual(["/api/v10/users/@me", "/api/v10/users/@me"]);
      expect(errors).toEqual([
        "discord: Discord refused the bot token (DISCORD_BOT_TOKEN): 401 Unauthorized; next login in 5 s",
      ]);
      const stopping = Date.now();
      await channel.stop();
      expect(Date.now() - stopping).toBeLessThan(1000);
      expect(sessions.count).toBe(1);
    } finally {
      await runtime.stop();
    }
  });
});
