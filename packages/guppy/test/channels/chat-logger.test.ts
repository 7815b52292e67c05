import { type Logger, loadConfig } from "@guppy/core";
import { describe, expect, it } from "vitest";
import { secretValues, toChatLogger } from "../../src/channels/bridge/chat-logger.js";
import { guppySettings } from "../../src/channels/registry.js";

/** A logger that keeps what it was given. */
function recordingLogger() {
  const lines: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
  const at =
    (level: string) =>
    (message: string, fields?: Record<string, unknown>): void => {
      lines.push({ level, message, ...(fields ? { fields } : {}) });
    };
  const logger: Logger = {
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
  };
  return { logger, lines };
}

describe("the chat SDK's logger on guppy's", () => {
  it("keeps an adapter's details as fields, not as [object Object]", () => {
    const { logger, lines } = recordingLogger();
    const chat = toChatLogger(logger, "telegram");
    chat.warn("Failed to process incoming Telegram media group", {
      error: new TypeError("fetch failed"),
      mediaGroupId: "album-1",
      threadId: "telegram:42",
      count: 3,
      update: { message: { message_id: 7 } },
      level: "oops",
    });
    chat.child("polling").error("Message processing error", "plain", 5);
    expect(lines).toEqual([
      {
        level: "warn",
        message: "telegram: Failed to process incoming Telegram media group",
        fields: {
          error: "TypeError: fetch failed",
          mediaGroupId: "album-1",
          threadId: "telegram:42",
          count: 3,
          update: '{"message":{"message_id":7}}',
          detail_level: "oops",
        },
      },
      {
        level: "error",
        message: "telegram:polling: Message processing error",
        fields: { args: ["plain", 5] },
      },
    ]);
    expect(JSON.stringify(lines)).not.toContain("[object Object]");
  });

  it("masks the secret settings' values wherever they appear", () => {
    const token = "123456:AAH-secret-bot-token";
    const config = loadConfig({
      env: { GUPPY_HOME: "/tmp/guppy-never-created", TELEGRAM_BOT_TOKEN: token },
      settings: guppySettings,
    });
    expect(secretValues(config)).toEqual([token]);
    const { logger, lines } = recordingLogger();
    const chat = toChatLogger(logger, "telegram", secretValues(config));
    chat.error(`request to https://api.telegram.org/bot${token}/getUpdates failed`, {
      url: `https://api.telegram.org/bot${token}/getUpdates`,
      error: new Error(`bad ${token}`),
    });
    chat.child("x").warn("again", `bot${token}`);
    // A token across the cut of a long value is masked whole, not cut first.
    chat.warn("long", { url: `${"x".repeat(990)}/bot${token}/getMe` });
    // A placeholder too short to be a real secret is not masked everywhere.
    const short = toChatLogger(logger, "t", ["x"]);
    short.warn("box", { word: "xx" });
    const text = JSON.stringify(lines);
    expect(text).not.toContain("AAH-secret");
    expect(lines[0]?.fields?.url).toBe("https://api.telegram.org/bot****/getUpdates");
    expect(lines[1]?.fields?.args).toEqual(["bot****"]);
    expect(lines[2]?.fields?.url).toBe(`${"x".repeat(990)}/bot****/g`);
    expect(lines[3]?.fields?.word).toBe("xx");
  });
});
