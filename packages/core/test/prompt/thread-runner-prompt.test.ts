import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  type FauxProviderRegistration,
  fauxAssistantMessage,
  fauxToolCall,
  registerFauxProvider,
} from "@mariozechner/pi-ai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import { createThreadRunner } from "../../src/runner/create-thread-runner.js";
import { createStore } from "../../src/store/create-store.js";
import { tempHome } from "../helpers/temp-home.js";

describe("thread runner system prompt (faux provider)", () => {
  let t: ReturnType<typeof tempHome>;
  let faux: FauxProviderRegistration;
  beforeEach(() => {
    t = tempHome();
    faux = registerFauxProvider({
      models: [{ id: "faux-1", contextWindow: 100_000, maxTokens: 1000 }],
    });
  });
  afterEach(() => {
    faux.unregister();
    t.cleanup();
  });

  it("rebuilds the prompt before every run, so memory the agent wrote is in the next run", async () => {
    t.write("cli/local/MEMORY.md", "Channel: testing.");
    const warnings: string[] = [];
    const config = loadConfig({ env: { GUPPY_TIMEZONE: "UTC" }, home: t.home });
    const runner = createThreadRunner({
      threadId: "cli:local:default",
      config,
      resolved: {
        ref: "faux/faux-1",
        model: faux.getModel(),
        apiKey: "faux",
        maxTokens: 1000,
        custom: false,
      },
      store: createStore({ home: t.home }),
      logger: {
        debug() {},
        info() {},
        warn: (m) => warnings.push(m),
        error: (m) => warnings.push(m),
      },
    });
    const prompts: string[] = [];
    const memoryPath = join(t.home, "MEMORY.md");
    faux.setResponses([
      (context) => {
        prompts.push(context.systemPrompt ?? "");
        return fauxAssistantMessage(
          fauxToolCall("write", { path: memoryPath, content: "Ana drinks green tea." }),
          { stopReason: "toolUse" },
        );
      },
      (context) => {
        prompts.push(context.systemPrompt ?? "");
        return fauxAssistantMessage("Saved.");
      },
      (context) => {
        prompts.push(context.systemPrompt ?? "");
        return fauxAssistantMessage("You drink green tea.");
      },
    ]);
    t.write("skills/bad/SKILL.md", "no frontmatter");

    expect((await runner.prompt({ text: "remember: I drink green tea" })).text).toBe("Saved.");
    expect(readFileSync(memoryPath, "utf8")).toBe("Ana drinks green tea.");
    expect((await runner.prompt({ text: "what do I drink?" })).text).toBe("You drink green tea.");

    // Within a run the prompt stays the same bytes; the next run sees the new memory.
    expect(prompts[1]).toBe(prompts[0]);
    expect(prompts[0]).not.toContain("Ana drinks green tea.");
    expect(prompts[0]).toContain("### Channel Memory (cli:local)\n\nChannel: testing.");
    expect(prompts[2]).toContain("### Global Memory\n\nAna drinks green tea.");
    // A bad skill file is reported once per thread, not once per run.
    expect(warnings).toEqual([
      `skill ${join(t.home, "skills/bad/SKILL.md")} skipped: no YAML frontmatter (the file must start with a --- line)`,
    ]);
  });
});
