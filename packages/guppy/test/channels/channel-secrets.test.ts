import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { lastMessage, type MockLlm, startMockLlm } from "../helpers/mock-llm.js";
import { startRuntime } from "../helpers/test-runtime.js";
import { until } from "./helpers/until.js";

const TOKENS = {
  TELEGRAM_BOT_TOKEN: "123456:AAH-telegram-secret",
  SLACK_BOT_TOKEN: "xoxb-slack-secret",
  SLACK_APP_TOKEN: "xapp-slack-secret",
  DISCORD_BOT_TOKEN: "discord.secret.token",
  GUPPY_API_TOKEN: "http-api-secret-token",
};

describe("a channel's secret settings", () => {
  let llm: MockLlm;
  beforeAll(async () => {
    llm = await startMockLlm((request) =>
      lastMessage(request)?.role === "tool"
        ? { content: "done" }
        : { toolCalls: [{ name: "bash", arguments: JSON.stringify({ command: "env" }) }] },
    );
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    await llm.stop();
  });

  it("are withheld from the commands the agent runs, like core's", async () => {
    for (const [name, value] of Object.entries(TOKENS)) vi.stubEnv(name, value);
    vi.stubEnv("GUPPY_TEST_UNRELATED", "still-here");
    const runtime = await startRuntime(llm);
    try {
      const threadId = "test:secrets:1";
      const result = runtime.orchestrator.send(threadId, {
        type: "prompt",
        text: "show env",
        thread: { threadId, notice: () => {} },
      });
      expect(result.status).toBe("queued");
      await until("the tool result to reach the model", () => llm.requests().length >= 2);
      const shown = String(lastMessage(llm.requests()[1]!)?.content);
      expect(shown).toContain("GUPPY_TEST_UNRELATED=still-here");
      for (const [name, value] of Object.entries(TOKENS)) {
        expect(shown, name).not.toContain(value);
        expect(shown, name).not.toContain(`${name}=`);
      }
    } finally {
      await runtime.stop();
    }
  });
});
