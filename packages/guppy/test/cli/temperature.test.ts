import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lastMessage, type MockLlm, requestText, startMockLlm } from "../helpers/mock-llm.js";
import { cleanEnv, runCli, tempHome } from "../helpers/run-cli.js";

/** GUPPY_TEMPERATURE reaches every request as sent; unset, the request carries none. */
describe.each(["openai-completions", "anthropic-messages"] as const)(
  "GUPPY_TEMPERATURE on the wire (%s)",
  (api) => {
    let llm: MockLlm;
    const home = tempHome();
    const env = (extra: Record<string, string>) =>
      cleanEnv({ ...llm.env(api), GUPPY_HOME: home.home, GUPPY_SANDBOX: "host", ...extra });

    beforeAll(async () => {
      llm = await startMockLlm((request) => {
        const last = lastMessage(request);
        if (last?.role === "tool") return { content: "done" };
        if (requestText({ ...request, messages: last ? [last] : [] }).includes("use a tool"))
          return { toolCalls: [{ name: "bash", arguments: JSON.stringify({ command: "true" }) }] };
        return { content: "ok" };
      });
    });
    afterAll(async () => {
      await llm.stop();
      home.cleanup();
    });

    it("sends the set temperature with every request of a run, and none when unset", async () => {
      const set = await runCli(["chat", "-m", "use a tool", "--session", "warm"], {
        env: env({ GUPPY_TEMPERATURE: "0.3" }),
      });
      expect(set.stderr).toBe("");
      expect(set.code).toBe(0);
      const warm = llm.rawBodies() as Array<{ temperature?: number }>;
      expect(warm).toHaveLength(2);
      expect(warm.map((b) => b.temperature)).toEqual([0.3, 0.3]);

      const unset = await runCli(["chat", "-m", "hello", "--session", "plain"], { env: env({}) });
      expect(unset.code).toBe(0);
      const plain = (llm.rawBodies() as Array<Record<string, unknown>>).slice(2);
      expect(plain).toHaveLength(1);
      // (aimock's journal gives an Anthropic request in the OpenAI shape: the key, undefined.)
      expect(plain[0]?.temperature).toBeUndefined();
    });

    it("refuses a temperature out of range with one line naming the setting", async () => {
      const r = await runCli(["chat", "-m", "hello", "--session", "bad"], {
        env: env({ GUPPY_TEMPERATURE: "7" }),
      });
      expect(r.code).not.toBe(0);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toContain("GUPPY_TEMPERATURE");
    });
  },
);
