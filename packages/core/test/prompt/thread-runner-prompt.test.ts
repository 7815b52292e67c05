import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { describe, expect, it } from "vitest";
import { createThreadRunner } from "../../src/runner/create-thread-runner.js";
import { loadConfig } from "../../src/settings.js";
import { createStore } from "../../src/store/create-store.js";
import { useFauxHome } from "../helpers/faux-home.js";

describe("thread runner system prompt (faux provider)", () => {
  const f = useFauxHome();

  it("rebuilds the prompt before every run, so memory the agent wrote is in the next run", async () => {
    f.t.write("cli/local/MEMORY.md", "Channel: testing.");
    const warnings: string[] = [];
    const config = loadConfig({ env: { GUPPY_TIMEZONE: "UTC" }, home: f.t.home });
    const runner = createThreadRunner({
      threadId: "cli:local:default",
      config,
      resolved: f.resolved(),
      store: createStore({ home: f.t.home }),
      logger: {
        debug() {},
        info() {},
        warn: (m) => warnings.push(m),
        error: (m) => warnings.push(m),
      },
    });
    const prompts: string[] = [];
    const memoryPath = join(f.t.home, "MEMORY.md");
    f.faux.setResponses([
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
    f.t.write("skills/bad/SKILL.md", "no frontmatter");

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
      `skill ${join(f.t.home, "skills/bad/SKILL.md")} skipped: no YAML frontmatter (the file must start with a --- line)`,
    ]);
  });
});
