import { loadConfig, settingsSchema, withAppSettings } from "@guppy/core";
import { secretEnvNames } from "@guppy/core/config";
import { describe, expect, it, vi } from "vitest";
import {
  accessChannels,
  allSettings,
  channels,
  guppySettings,
  heartbeatAdapters,
} from "../../src/channels/registry.js";

// A descriptor must not load its channel's code: `guppy --version` and `guppy chat` read the
// registry (flags, settings) and must load no chat SDK.
vi.mock("chat", () => {
  throw new Error("chat was loaded");
});
vi.mock("@chat-adapter/telegram", () => {
  throw new Error("@chat-adapter/telegram was loaded");
});
vi.mock("@chat-adapter/slack", () => {
  throw new Error("@chat-adapter/slack was loaded");
});
vi.mock("@chat-adapter/discord", () => {
  throw new Error("@chat-adapter/discord was loaded");
});

const configWith = (env: Record<string, string>) =>
  loadConfig({ env: { GUPPY_HOME: "/nonexistent/guppy-home", ...env }, settings: guppySettings });

describe("the channel registry", () => {
  it("lists every channel once, in start order, the HTTP API first", () => {
    expect(channels.map((c) => c.name)).toEqual(["http", "telegram", "slack", "discord"]);
    expect(channels.map((c) => c.label)).toEqual(["HTTP API", "Telegram", "Slack", "Discord"]);
  });

  it("gives guppy pairing and invite the chat channels", () => {
    expect(accessChannels).toEqual(["telegram", "slack", "discord"]);
  });

  it("sends the heartbeat to the chat channels, else to the HTTP API's or the terminal's thread", () => {
    expect(heartbeatAdapters).toEqual({
      chat: ["telegram", "slack", "discord"],
      fallback: ["http", "cli"],
    });
  });

  it("adds the channels' settings to core's, each chat channel with its own access policy", () => {
    expect(() => withAppSettings(guppySettings)).not.toThrow();
    // No two channels give the same setting (the registry would keep only the last).
    const given = channels.flatMap((c) => Object.keys(c.settings));
    expect(new Set(given).size).toBe(given.length);
    expect(Object.keys(allSettings)).toEqual([
      ...Object.keys(settingsSchema),
      ...Object.keys(guppySettings),
    ]);
    for (const name of accessChannels) {
      expect(allSettings[`${name}AccessPolicy`]?.env).toBe(
        `GUPPY_${name.toUpperCase()}_ACCESS_POLICY`,
      );
    }
    expect(secretEnvNames(allSettings).sort()).toEqual([
      "BRAVE_API_KEY",
      "DISCORD_BOT_TOKEN",
      "GUPPY_API_KEY",
      "GUPPY_API_TOKEN",
      "SLACK_APP_TOKEN",
      "SLACK_BOT_TOKEN",
      "TELEGRAM_BOT_TOKEN",
    ]);
  });

  it("enables a chat channel by its token, the HTTP API always", () => {
    const enabled = (env: Record<string, string>) =>
      channels.filter((c) => c.enabled(configWith(env))).map((c) => c.name);
    expect(enabled({})).toEqual(["http"]);
    expect(enabled({ TELEGRAM_BOT_TOKEN: "123:abc" })).toEqual(["http", "telegram"]);
    expect(enabled({ SLACK_APP_TOKEN: "xapp-1" })).toEqual(["http", "slack"]);
    expect(enabled({ DISCORD_BOT_TOKEN: "d.t" })).toEqual(["http", "discord"]);
  });

  it("loads a channel's code only when asked", async () => {
    // The mocked SDK throws as the channel's code imports it.
    const telegram = channels.find((c) => c.name === "telegram");
    await expect(telegram?.load()).rejects.toThrow();
  });
});
