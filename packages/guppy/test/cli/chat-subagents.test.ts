import type { ChatCompletionRequest, FixtureResponse } from "@copilotkit/aimock";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lastMessage, type MockLlm, startMockLlm } from "../helpers/mock-llm.js";
import { cleanEnv, runCli, tempHome } from "../helpers/run-cli.js";

const text = (content: unknown) =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content
          .map((p) => (p && typeof p === "object" && "text" in p ? String(p.text) : ""))
          .join("")
      : "";

/**
 * A child (its first user message is guppy's task prompt) answers with its task; the parent asks
 * for `subagent` on "wait TASK", `send_message` on "tell TEXT", and answers a tool result with it.
 */
function script(request: ChatCompletionRequest): FixtureResponse {
  const users = request.messages.filter((m) => m.role === "user").map((m) => text(m.content));
  const last = lastMessage(request);
  if ((users[0] ?? "").includes("You are a subagent")) {
    return { content: `child answer for ${/Task: (.*)$/s.exec(users[0] ?? "")?.[1]}` };
  }
  if (last?.role === "tool") return { content: `parent got: ${text(last.content)}` };
  const wait = /wait (\S+)/.exec(users.at(-1) ?? "");
  if (wait) {
    return { toolCalls: [{ name: "subagent", arguments: JSON.stringify({ task: wait[1] }) }] };
  }
  return { content: "plain" };
}

describe("guppy chat (in-process orchestrator) has the subagent tools", () => {
  let llm: MockLlm;
  const home = tempHome();
  beforeAll(async () => {
    llm = await startMockLlm((request) => script(request));
  });
  afterAll(async () => {
    await llm.stop();
    home.cleanup();
  });

  it("runs a subagent on its single run slot and answers with the child's result", async () => {
    const r = await runCli(["chat", "-m", "wait count-the-files", "--session", "subs"], {
      env: cleanEnv({ ...llm.env("openai-completions"), GUPPY_HOME: home.home }),
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("parent got: child answer for count-the-files\n");
  });
});
