import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fauxAssistantMessage, registerFauxProvider } from "@mariozechner/pi-ai";
import { afterEach, describe, expect, it } from "vitest";
import { createTokenCounter } from "../../src/context/token-counter.js";
import { createAgentRunner } from "../../src/runner/create-agent-runner.js";
import { createStore } from "../../src/store/create-store.js";

// This file must start without the BPE tables (a file of its own: module state is per file).
describe("the context stats the orchestrator reads after every run", () => {
  const home = mkdtempSync(join(tmpdir(), "guppy-stats-bound-"));
  const faux = registerFauxProvider({
    models: [{ id: "faux-1", contextWindow: 100_000, maxTokens: 1000 }],
  });
  afterEach(() => {
    faux.unregister();
    rmSync(home, { recursive: true, force: true });
  });

  it("do not load the tokenizer far from the compaction threshold", async () => {
    const runner = createAgentRunner({
      threadId: "http:api:bound",
      store: createStore({ home }),
      model: faux.getModel(),
      apiKey: "faux",
      systemPrompt: "Answer briefly.",
      tools: [],
      maxToolRounds: 5,
      maxRetries: 0,
    });
    faux.setResponses([fauxAssistantMessage("One."), fauxAssistantMessage("Two.")]);
    await runner.prompt({ text: "hi" });
    // What the orchestrator does after each run (its thread snapshot: state, tokens).
    expect(runner.stats().context.tokens).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 50)); // a load started in the background would be done
    // Loaded, every later count would be an exact BPE count: ~40 µs more per prompt under load.
    expect(createTokenCounter().loaded).toBe(false);
    await runner.prompt({ text: "again" });
    expect(runner.stats().context.tokens).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 50));
    expect(createTokenCounter().loaded).toBe(false);
  });
});
