import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ChatCompletionRequest } from "@copilotkit/aimock";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempHome } from "../helpers/run-cli.js";
import {
  type AsyncMockLlm,
  contentText,
  startAsyncMockLlm,
  startServe,
  waitFor,
} from "./serve-harness.js";

const everything = fileURLToPath(
  new URL(
    "../../../../node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    import.meta.url,
  ),
);

/** Processes whose command line holds `marker`. */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker)) found.push(Number(pid));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

function respond(request: ChatCompletionRequest) {
  const last = request.messages.at(-1);
  if (last?.role === "tool") return { content: `tool: ${contentText(last.content)}` };
  const names = (request.tools ?? []).map((tool) => tool.function.name);
  if (!names.includes("everything__echo")) return { content: "no mcp tools yet" };
  return {
    toolCalls: [{ name: "everything__echo", arguments: JSON.stringify({ message: "from-serve" }) }],
  };
}

describe("guppy serve with an MCP server", () => {
  let llm: AsyncMockLlm;
  const home = tempHome();
  beforeAll(async () => {
    llm = await startAsyncMockLlm(respond);
  });
  afterAll(async () => {
    await llm.stop();
    home.cleanup();
  });

  it("is ready without waiting for it, adds its tools when it connects, and ends it on SIGTERM", async () => {
    const marker = `guppy-mcp-serve-test-${process.pid}`;
    writeFileSync(
      join(home.home, "settings.json"),
      JSON.stringify({
        mcpServers: {
          // The extra argument marks its process (server-everything reads only its first).
          everything: { command: process.execPath, args: [everything, "stdio", marker] },
        },
      }),
    );
    const s = await startServe(home.home, { ...llm.env(), GUPPY_SANDBOX: "host" });
    try {
      const ask = async () => {
        const r = await s.api("/v1/chat/completions", {
          method: "POST",
          body: JSON.stringify({ messages: [{ role: "user", content: "echo please" }] }),
        });
        const body = (await r.json()) as { choices: { message: { content: string } }[] };
        return body.choices[0]?.message.content;
      };
      // Asked until the server's tools are in a run (a slow start adds them without a restart).
      const answer = await waitFor(
        async () => {
          const text = await ask();
          return text === "no mcp tools yet" ? undefined : text;
        },
        60_000,
        "the MCP tools in a run",
      );
      expect(answer).toBe("tool: Echo: from-serve");
      expect(processesWith(marker)).toHaveLength(1);
    } finally {
      s.child.kill("SIGTERM");
      await s.exited;
    }
    await waitFor(
      () => (processesWith(marker).length === 0 ? true : undefined),
      10_000,
      "no server",
    );
    expect(processesWith(marker)).toEqual([]);
  }, 120_000);
});
