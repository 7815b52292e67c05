import type { ChatCompletionRequest, FixtureResponse } from "@copilotkit/aimock";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempHome } from "../helpers/run-cli.js";
import {
  type AsyncMockLlm,
  contentText,
  type ServeProcess,
  startAsyncMockLlm,
  startServe,
  threadMessages,
  waitFor,
} from "./serve-harness.js";

/** "run echo" → a bash call printing a mark, then a long one and a failing one; then "done". */
function script(request: ChatCompletionRequest): FixtureResponse {
  const last = request.messages[request.messages.length - 1];
  if (last?.role === "tool") return { content: "done" };
  if (contentText(last?.content).includes("run echo")) {
    const bash = (command: string) => ({ name: "bash", arguments: JSON.stringify({ command }) });
    return {
      toolCalls: [
        bash("echo tools-route-mark"),
        bash("head -c 5000 /dev/zero | tr '\\0' x"),
        bash("echo failing >&2; exit 3"),
      ],
    };
  }
  return { content: "ok" };
}

interface ToolsAnswer {
  thread_id: string;
  compacted: boolean;
  tools: Array<{
    id: string;
    name: string;
    args: { command?: string };
    result: string | null;
    result_truncated: boolean;
    is_error: boolean;
    date: string | null;
    prompt: string | null;
  }>;
}

/** Issue 38 item 2: GET /v1/threads/{id}/tools, the tool calls still in the thread's context. */
describe("GET /v1/threads/{id}/tools (guppy serve, real bash)", () => {
  let llm: AsyncMockLlm;
  const home = tempHome();
  let serve: ServeProcess;

  beforeAll(async () => {
    llm = await startAsyncMockLlm(script);
    serve = await startServe(home.home, { ...llm.env(), GUPPY_SANDBOX: "host" });
  });
  afterAll(async () => {
    serve?.child.kill("SIGTERM");
    await serve?.exited;
    await llm?.stop();
    home.cleanup();
  });

  it("needs the token, and 404s an unknown thread", async () => {
    const bare = await fetch(`${serve.url}/v1/threads/http:api:tools/tools`);
    expect(bare.status).toBe(401);
    const unknown = await serve.api("/v1/threads/http:api:never-seen/tools");
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { type: string } }).error.type).toBe("not_found");
  });

  it("gives the calls of the context after a run, with their results, then none after /new", async () => {
    const id = "http:api:tools";
    const posted = await serve.api(`/v1/threads/${id}/messages`, {
      method: "POST",
      body: JSON.stringify({ text: "please run echo" }),
    });
    expect(posted.status).toBe(202);
    await waitFor(
      async () =>
        (await threadMessages(serve, id)).some((m) => m.is_bot && m.text === "done") || undefined,
      30_000,
      "the run's answer",
    );
    const r = await serve.api(`/v1/threads/${id}/tools`);
    expect(r.status).toBe(200);
    const body = (await r.json()) as ToolsAnswer;
    expect(body.thread_id).toBe(id);
    expect(body.compacted).toBe(false);
    expect(body.tools.map((t) => t.name)).toEqual(["bash", "bash", "bash"]);
    const [echo, long, failing] = body.tools;
    expect(echo?.args.command).toBe("echo tools-route-mark");
    expect(echo?.result).toContain("tools-route-mark");
    expect(echo?.is_error).toBe(false);
    expect(echo?.prompt).toContain("please run echo");
    expect(echo?.date).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    // A long result is cut, and says so.
    expect(long?.result_truncated).toBe(true);
    expect(long?.result?.length).toBeLessThanOrEqual(2001);
    expect(failing?.is_error).toBe(true);
    expect(failing?.result).toContain("failing");

    const reset = await serve.api(`/v1/threads/${id}/new`, { method: "POST" });
    expect(reset.status).toBe(200);
    const after = (await (await serve.api(`/v1/threads/${id}/tools`)).json()) as ToolsAnswer;
    expect(after.tools).toEqual([]);
  }, 60_000);
});
