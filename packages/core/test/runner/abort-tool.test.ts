import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentTool } from "@mariozechner/pi-agent-core";
import {
  type FauxProviderRegistration,
  fauxAssistantMessage,
  fauxToolCall,
  registerFauxProvider,
} from "@mariozechner/pi-ai";
import { Type } from "typebox";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAgentRunner } from "../../src/runner/create-agent-runner.js";
import { createStore, type Store } from "../../src/store/create-store.js";

describe("aborting a run whose tool does not listen to its signal", () => {
  let home: string;
  let store: Store;
  let faux: FauxProviderRegistration;
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), "guppy-abort-tool-"));
    store = createStore({ home });
    faux = registerFauxProvider({
      models: [{ id: "faux-1", contextWindow: 100_000, maxTokens: 1000 }],
    });
  });
  afterEach(() => {
    faux.unregister();
    rmSync(home, { recursive: true, force: true });
  });

  it("ends the run within a second, as aborted", async () => {
    let started = false;
    const deaf: AgentTool = {
      name: "deaf",
      label: "deaf",
      description: "hangs and ignores its abort signal",
      parameters: Type.Object({}),
      execute: () => {
        started = true;
        return new Promise(() => {});
      },
    };
    faux.setResponses([
      fauxAssistantMessage([fauxToolCall("deaf", {})], { stopReason: "toolUse" }),
    ]);
    const runner = createAgentRunner({
      threadId: "cli:local:deaf",
      store,
      model: faux.getModel(),
      apiKey: "faux",
      systemPrompt: "test",
      tools: [deaf],
      maxToolRounds: 5,
      maxRetries: 0,
    });
    const run = runner.prompt({ text: "go" });
    while (!started) await new Promise((r) => setTimeout(r, 10));
    const t0 = Date.now();
    runner.abort();
    const result = await run;
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(result.stopReason).toBe("aborted");
    expect(runner.running).toBe(false);
  });
});
