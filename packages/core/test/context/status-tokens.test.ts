import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentTool } from "@mariozechner/pi-agent-core";
import {
  type FauxProviderRegistration,
  fauxAssistantMessage,
  registerFauxProvider,
} from "@mariozechner/pi-ai";
import { Type } from "typebox";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTokenCounter, loadEncoder } from "../../src/context/token-counter.js";
import { createAgentRunner } from "../../src/runner/create-agent-runner.js";
import { createStore } from "../../src/store/create-store.js";

const echoTool: AgentTool = {
  name: "echo",
  label: "echo",
  description: "echo text back to the caller",
  parameters: Type.Object({ text: Type.String() }),
  execute: async () => ({ content: [{ type: "text", text: "ok" }], details: {} }),
};

/** An English system prompt of a few thousand characters, as a real one is. */
const systemPrompt = Array.from(
  { length: 60 },
  (_, i) => `Rule ${i}: answer the question that was asked, briefly and in plain words.`,
).join("\n");

// This file must start without the BPE tables: the figures under test are the ones counted
// before they load (the tokenizer is loaded only near the compaction threshold).
describe("the context tokens /status shows", () => {
  let home: string;
  let faux: FauxProviderRegistration;
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), "guppy-status-"));
    faux = registerFauxProvider({
      models: [{ id: "faux-1", contextWindow: 100_000, maxTokens: 1000 }],
    });
  });
  afterEach(() => {
    faux.unregister();
    rmSync(home, { recursive: true, force: true });
  });

  it("are about the tokenizer's count of the prompt before a short turn and after it", async () => {
    const runner = createAgentRunner({
      threadId: "cli:local:status",
      store: createStore({ home }),
      model: faux.getModel(),
      apiKey: "faux",
      systemPrompt: () => systemPrompt,
      tools: [echoTool],
      maxToolRounds: 5,
      maxRetries: 0,
    });
    faux.setResponses([fauxAssistantMessage("Hello.")]);
    const before = runner.stats().context;
    await runner.prompt({ text: "hi" });
    const after = runner.stats().context;
    expect(after.fromUsage).toBe(false); // the first request's own count, made before it

    await loadEncoder();
    const counter = createTokenCounter();
    const exact = counter.system(systemPrompt) + counter.tools([echoTool]);
    for (const tokens of [before.tokens, after.tokens]) {
      expect(tokens).toBeGreaterThan(exact * 0.5);
      expect(tokens).toBeLessThan(exact * 2);
    }
    // "hi" and "Hello." add a few tokens, not a multiple of the prompt.
    expect(after.tokens).toBeGreaterThanOrEqual(before.tokens);
    expect(after.tokens).toBeLessThan(before.tokens * 1.2);
  });
});
