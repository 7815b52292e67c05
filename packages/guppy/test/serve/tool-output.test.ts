import type { ChatCompletionRequest, FixtureResponse } from "@copilotkit/aimock";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { tempHome } from "../helpers/run-cli.js";
import {
  type AsyncMockLlm,
  contentText,
  readSse,
  type ServeProcess,
  startAsyncMockLlm,
  startServe,
  threadMessages,
  waitFor,
} from "./serve-harness.js";

/** guppy's key for the model: a configured secret, so tool output holding it is redacted. */
const KEY = "test-key-0123456789abcdef";

/** "slow-count" → a bash call that prints a line every half second for 5 s, the key at the end. */
function script(request: ChatCompletionRequest): FixtureResponse {
  const last = request.messages[request.messages.length - 1];
  if (last?.role === "tool") return { content: "counted" };
  if (contentText(last?.content).includes("slow-count")) {
    const command = `for i in 1 2 3 4 5 6 7 8 9 10; do echo "line $i"; sleep 0.5; done; printf '%s%s\\n' ${KEY.slice(0, 9)} ${KEY.slice(9)}; sleep 0.5`;
    return { toolCalls: [{ name: "bash", arguments: JSON.stringify({ command }) }] };
  }
  return { content: "ok" };
}

describe("live tool output on the HTTP event stream (guppy serve, real bash)", () => {
  let llm: AsyncMockLlm;
  const home = tempHome();
  let serve: ServeProcess | undefined;

  beforeAll(async () => {
    llm = await startAsyncMockLlm(script);
  });
  afterEach(async () => {
    if (serve && serve.child.exitCode === null && serve.child.signalCode === null) {
      serve.child.kill("SIGTERM");
      await serve.exited;
    }
  });
  afterAll(async () => {
    await llm.stop();
    home.cleanup();
  });

  it("streams a running command's last lines as tool_output events before its result, redacted", async () => {
    serve = await startServe(home.home, {
      ...llm.env(),
      GUPPY_API_KEY: KEY,
      GUPPY_SANDBOX: "host",
    });
    const id = "http:api:live";
    // The thread is made by its first message: the event stream is for a thread that exists.
    const first = await serve.api(`/v1/threads/${id}/messages`, {
      method: "POST",
      body: JSON.stringify({ text: "hello" }),
    });
    expect(first.status).toBeLessThan(300);
    await waitFor(
      async () =>
        (await threadMessages(serve as ServeProcess, id)).some((m) => m.is_bot) || undefined,
      20_000,
      "the first answer",
    );
    const events = await serve.api(`/v1/threads/${id}/events`);
    expect(events.status).toBe(200);
    const reading = readSse(events, (event) => event === "final");
    const posted = await serve.api(`/v1/threads/${id}/messages`, {
      method: "POST",
      body: JSON.stringify({ text: "slow-count" }),
    });
    expect(posted.status).toBeLessThan(300);
    const seen = await reading;
    const names = seen.map((e) => e.event);
    const call = names.indexOf("tool_call");
    const result = names.indexOf("tool_result");
    expect(call).toBeGreaterThanOrEqual(0);
    expect(result).toBeGreaterThan(call);
    const outputs = seen.slice(call, result).filter((e) => e.event === "tool_output");
    // Several updates while the command ran (one a line at most, a few a second at most).
    expect(outputs.length).toBeGreaterThanOrEqual(3);
    const texts = outputs.map((e) => String(e.data.text));
    for (const e of outputs)
      expect(e.data).toMatchObject({ name: "bash", id: seen[call]?.data.id });
    // Each carries the output so far, its last lines: growing, never more than 8 lines.
    expect(texts[0]).toMatch(/^line 1/);
    expect(texts.some((t) => t.includes("line 5"))).toBe(true);
    for (const t of texts) expect(t.split("\n").length).toBeLessThanOrEqual(8);
    // The key the command printed reaches the stream redacted.
    expect(JSON.stringify(seen)).not.toContain(KEY);
    expect(texts.at(-1)).toContain("[redacted: GUPPY_API_KEY]");
    expect(texts.at(-1)).not.toContain("line 1\n");
  }, 60_000);
});
