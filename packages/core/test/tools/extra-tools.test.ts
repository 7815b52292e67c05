import type { AgentTool } from "@mariozechner/pi-agent-core";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { createThreadRunner } from "../../src/runner/create-thread-runner.js";
import { loadConfig } from "../../src/settings.js";
import { createStore } from "../../src/store/create-store.js";
import type { ExtraToolSource } from "../../src/tools/create-tools.js";
import type { Role } from "../../src/types.js";
import { useFauxHome } from "../helpers/faux-home.js";

/** A changing set of tools, as an MCP manager is: `set` replaces them and bumps the version. */
function extraSource() {
  let version = 0;
  let tools: AgentTool[] = [];
  const source: ExtraToolSource & { set(names: string[]): void } = {
    version: () => version,
    tools: () => tools,
    set(names) {
      version++;
      tools = names.map((name) => ({
        name,
        label: name,
        description: `the ${name} tool`,
        parameters: Type.Object({}),
        execute: async () => ({ content: [{ type: "text", text: name }], details: {} }),
      }));
    },
  };
  return source;
}

describe("tools that come and go (an MCP server's) in a thread's runs", () => {
  const f = useFauxHome();

  /** The tool names and system prompt each run was offered. */
  async function runs(
    extra: ExtraToolSource,
    steps: { role: Role; before?: () => void }[],
    settings: object = {},
  ) {
    f.t.write("settings.json", JSON.stringify(settings));
    const seen: { names: string[]; prompt: string; tools: unknown }[] = [];
    f.faux.setResponses(
      steps.map(() => (context) => {
        seen.push({
          names: (context.tools ?? []).map((tool) => tool.name),
          prompt: context.systemPrompt ?? "",
          tools: context.tools,
        });
        return fauxAssistantMessage("ok");
      }),
    );
    const runner = createThreadRunner({
      threadId: "telegram:1:default",
      config: loadConfig({ env: { GUPPY_TIMEZONE: "UTC" }, home: f.t.home }),
      resolved: f.resolved(),
      store: createStore({ home: f.t.home }),
      extraTools: extra,
    });
    for (const step of steps) {
      step.before?.();
      await runner.prompt({ text: "hi", role: step.role });
    }
    return seen;
  }

  it("an owner gets them after the built-in tools once they are there, a guest not by default", async () => {
    const extra = extraSource();
    const seen = await runs(extra, [
      { role: "owner" },
      { role: "owner", before: () => extra.set(["files__read_file", "files__list"]) },
      { role: "guest" },
      { role: "owner" },
    ]);
    expect(seen[0]?.names).not.toContain("files__read_file");
    expect(seen[1]?.names.slice(-2)).toEqual(["files__read_file", "files__list"]);
    expect(seen[1]?.prompt).toContain("- files__list: the files__list tool");
    expect(seen[0]?.prompt).not.toContain("files__list");
    expect(seen[2]?.names).not.toContain("files__list");
    expect(seen[3]?.names).toEqual(seen[1]?.names);
  });

  it("the `tools` setting gives or takes them by their full names", async () => {
    const extra = extraSource();
    extra.set(["files__read_file", "files__delete"]);
    const seen = await runs(extra, [{ role: "guest" }, { role: "owner" }], {
      mcpServers: { files: { command: "files-mcp" } },
      tools: {
        telegram: {
          guest: { allow: ["read", "files__read_file"] },
          owner: { deny: ["files__delete"] },
        },
      },
    });
    expect(seen[0]?.names).toEqual(["read", "files__read_file"]);
    expect(seen[1]?.names).toContain("files__read_file");
    expect(seen[1]?.names).not.toContain("files__delete");
  });
});
