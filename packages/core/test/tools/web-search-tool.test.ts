import { type Context, fauxAssistantMessage } from "@mariozechner/pi-ai";
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { createThreadRunner } from "../../src/runner/create-thread-runner.js";
import { loadConfig } from "../../src/settings.js";
import { createStore } from "../../src/store/create-store.js";
import type { ServiceTools } from "../../src/tools/create-tools.js";
import type { Role } from "../../src/types.js";
import { useFauxHome } from "../helpers/faux-home.js";

/** Which runs are offered web_search: the settings' provider, the role, the app's own tool. */
describe("web_search in a thread's tools (faux provider)", () => {
  const f = useFauxHome();

  /** The tools (name and description) one run of a Slack thread offered `role`. */
  const offered = async (
    env: Record<string, string>,
    role: Role,
    services?: ServiceTools,
  ): Promise<Array<{ name: string; description: string }>> => {
    const config = loadConfig({ env: { GUPPY_TIMEZONE: "UTC", ...env }, home: f.t.home });
    const runner = createThreadRunner({
      threadId: "slack:C1:1",
      config,
      resolved: f.resolved(),
      store: createStore({ home: f.t.home }),
      services,
    });
    let tools: Array<{ name: string; description: string }> = [];
    f.faux.setResponses([
      (context: Context) => {
        tools = (context.tools ?? []).map(({ name, description }) => ({ name, description }));
        return fauxAssistantMessage("ok");
      },
    ]);
    await runner.prompt({ text: "hi", role });
    return tools;
  };
  const names = (tools: Array<{ name: string }>) => tools.map((tool) => tool.name);

  it("is offered to the owner when Brave or SearXNG is configured, and to no guest", async () => {
    expect(names(await offered({}, "owner"))).not.toContain("web_search");
    expect(names(await offered({ BRAVE_API_KEY: "k" }, "owner"))).toContain("web_search");
    expect(names(await offered({ GUPPY_SEARXNG_URL: "http://127.0.0.1:9" }, "owner"))).toContain(
      "web_search",
    );
    expect(names(await offered({ BRAVE_API_KEY: "k" }, "guest"))).not.toContain("web_search");
  });

  it("is the app's own when the app makes one", async () => {
    const own = {
      name: "web_search",
      label: "web_search",
      description: "the app's search",
      parameters: Type.Object({}),
      execute: async () => ({ content: [], details: {} }),
    };
    const tools = await offered({ BRAVE_API_KEY: "k" }, "owner", { web_search: () => own });
    expect(tools.filter((tool) => tool.name === "web_search")).toEqual([
      { name: "web_search", description: "the app's search" },
    ]);
  });
});
