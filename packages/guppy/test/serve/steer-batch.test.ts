import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChatCompletionRequest, FixtureResponse } from "@copilotkit/aimock";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { tempHome } from "../helpers/run-cli.js";
import {
  type AsyncMockLlm,
  contentText,
  type ServeProcess,
  startAsyncMockLlm,
  startServe,
  stopServes,
  threadMessages,
  waitFor,
} from "./serve-harness.js";

/** Where the scripted commands leave their marks (absolute: the sandbox is the host here). */
let marks: string;

/**
 * The scripted model: "three jobs" is answered with three bash calls in one response — the first
 * marks its start and sleeps, the others each leave a file; anything after a tool or a steer is
 * answered "noted".
 */
function script(request: ChatCompletionRequest): FixtureResponse {
  const last = request.messages[request.messages.length - 1];
  if (last?.role === "user" && contentText(last.content).includes("three jobs")) {
    const bash = (command: string) => ({ name: "bash", arguments: JSON.stringify({ command }) });
    return {
      toolCalls: [
        bash(`touch ${join(marks, "first-started")}; sleep 3; echo first done`),
        bash(`touch ${join(marks, "second")}`),
        bash(`touch ${join(marks, "third")}`),
      ],
    };
  }
  return { content: "noted" };
}

describe("a steer during a batch of tool calls (guppy serve, real bash)", () => {
  let llm: AsyncMockLlm;
  const homes: Array<ReturnType<typeof tempHome>> = [];
  const running: ServeProcess[] = [];

  beforeAll(async () => {
    llm = await startAsyncMockLlm(script);
  });
  afterEach(async () => {
    await stopServes(running, "SIGTERM");
    for (const h of homes.splice(0)) h.cleanup();
    rmSync(marks, { recursive: true, force: true });
  });
  afterAll(async () => {
    await llm.stop();
  });

  it("runs only the running call; the rest are skipped and the model's next request carries the steer", async () => {
    marks = mkdtempSync(join(tmpdir(), "guppy-steer-marks-"));
    const h = tempHome();
    homes.push(h);
    const s = await startServe(h.home, { ...llm.env(), GUPPY_SANDBOX: "host" });
    running.push(s);
    const id = "http:api:steer-batch";
    const before = llm.requests.length;
    const posted = await s.api(`/v1/threads/${id}/messages`, {
      method: "POST",
      body: JSON.stringify({ text: "three jobs" }),
    });
    expect(posted.status).toBeLessThan(300);
    await waitFor(
      () => existsSync(join(marks, "first-started")) || undefined,
      20_000,
      "first call",
    );
    const steered = await s.api(`/v1/threads/${id}/steer`, {
      method: "POST",
      body: JSON.stringify({ text: "stop, do the fourth instead" }),
    });
    expect(steered.status).toBe(200);
    const next = await waitFor(
      () => llm.requests.slice(before).find((r) => r.messages.some((m) => m.role === "tool")),
      30_000,
      "the request after the batch",
    );
    // The first call ran to its end; the two after it never ran.
    expect(existsSync(join(marks, "second"))).toBe(false);
    expect(existsSync(join(marks, "third"))).toBe(false);
    const tools = next.messages.filter((m) => m.role === "tool").map((m) => contentText(m.content));
    expect(tools).toHaveLength(3);
    expect(tools[0]).toContain("first done");
    expect(tools.slice(1)).toEqual([
      "skipped: the user changed course",
      "skipped: the user changed course",
    ]);
    const lastMessage = next.messages[next.messages.length - 1];
    expect(lastMessage?.role).toBe("user");
    expect(contentText(lastMessage?.content)).toContain("stop, do the fourth instead");
    // The run ends with the answer to the steer; nothing ran late.
    await waitFor(
      async () =>
        (await threadMessages(s, id)).some((m) => m.is_bot && m.text === "noted") || undefined,
      20_000,
      "the run's answer",
    );
    expect(existsSync(join(marks, "second"))).toBe(false);
    expect(existsSync(join(marks, "third"))).toBe(false);
  }, 60_000);
});
