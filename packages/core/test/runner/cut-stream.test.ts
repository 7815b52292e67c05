import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Api, AssistantMessage, Model } from "@mariozechner/pi-ai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAgentRunner } from "../../src/runner/create-agent-runner.js";
import { createStore, type Store } from "../../src/store/create-store.js";

/**
 * What a provider streams for one answer, per wire API: its opening, `text` as one delta, and
 * its ending (finish reason and end marker). A cut stream is one that stops before the ending.
 */
type WireApi = "openai-completions" | "anthropic-messages" | "openai-responses";
interface Answer {
  opening: string;
  text: (text: string) => string;
  ending: (text: string) => string;
}

const sse = (event: string | undefined, data: object) =>
  `${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`;

const completionsChunk = (delta: object, finish: string | null) =>
  sse(undefined, {
    id: "c1",
    object: "chat.completion.chunk",
    created: 1,
    model: "m",
    choices: [{ index: 0, delta, finish_reason: finish }],
  });

const WIRE: Record<WireApi, Answer> = {
  "openai-completions": {
    opening: completionsChunk({ role: "assistant", content: "" }, null),
    text: (text) => completionsChunk({ content: text }, null),
    ending: () => `${completionsChunk({}, "stop")}data: [DONE]\n\n`,
  },
  "anthropic-messages": {
    opening:
      sse("message_start", {
        type: "message_start",
        message: {
          id: "msg_1",
          type: "message",
          role: "assistant",
          model: "m",
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 5, output_tokens: 0 },
        },
      }) +
      sse("content_block_start", {
        type: "content_block_start",
        index: 0,
        content_block: { type: "text", text: "" },
      }),
    text: (text) =>
      sse("content_block_delta", {
        type: "content_block_delta",
        index: 0,
        delta: { type: "text_delta", text },
      }),
    ending: () =>
      sse("content_block_stop", { type: "content_block_stop", index: 0 }) +
      sse("message_delta", {
        type: "message_delta",
        delta: { stop_reason: "end_turn", stop_sequence: null },
        usage: { output_tokens: 3 },
      }) +
      sse("message_stop", { type: "message_stop" }),
  },
  "openai-responses": {
    opening:
      sse("response.created", {
        type: "response.created",
        response: { id: "resp_1", status: "in_progress", output: [] },
      }) +
      sse("response.output_item.added", {
        type: "response.output_item.added",
        output_index: 0,
        item: {
          type: "message",
          id: "msg_1",
          role: "assistant",
          status: "in_progress",
          content: [],
        },
      }) +
      sse("response.content_part.added", {
        type: "response.content_part.added",
        item_id: "msg_1",
        output_index: 0,
        content_index: 0,
        part: { type: "output_text", text: "", annotations: [] },
      }),
    text: (text) =>
      sse("response.output_text.delta", {
        type: "response.output_text.delta",
        item_id: "msg_1",
        output_index: 0,
        content_index: 0,
        delta: text,
      }),
    ending: (text) =>
      sse("response.output_item.done", {
        type: "response.output_item.done",
        output_index: 0,
        item: {
          type: "message",
          id: "msg_1",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text, annotations: [] }],
        },
      }) +
      sse("response.completed", {
        type: "response.completed",
        response: {
          id: "resp_1",
          status: "completed",
          output: [],
          usage: {
            input_tokens: 5,
            output_tokens: 2,
            total_tokens: 7,
            input_tokens_details: { cached_tokens: 0 },
          },
        },
      }),
  },
};

/** What the provider streams for the n-th request (0-based); the response then ends cleanly. */
type Behaviour = (n: number) => string;

describe.each<WireApi>(["openai-completions", "anthropic-messages", "openai-responses"])(
  "a stream that ends without a finish reason (%s, real HTTP)",
  (api) => {
    const wire = WIRE[api];
    let home: string;
    let store: Store;
    let server: Server;
    let behaviour: Behaviour;
    let requests: number;
    const sockets = new Set<Socket>();

    beforeEach(async () => {
      home = mkdtempSync(join(tmpdir(), "guppy-cut-"));
      store = createStore({ home });
      requests = 0;
      server = createServer((req, res: ServerResponse) => {
        const n = requests++;
        req.resume();
        req.on("end", () => {
          res.writeHead(200, { "content-type": "text/event-stream" });
          res.end(behaviour(n));
        });
      });
      server.on("connection", (s) => {
        sockets.add(s);
        s.on("close", () => sockets.delete(s));
      });
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    });
    afterEach(async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
      rmSync(home, { recursive: true, force: true });
    });

    const model = (): Model<Api> => ({
      id: "m",
      name: "m",
      api,
      provider: "test",
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}${api === "anthropic-messages" ? "" : "/v1"}`,
      reasoning: false,
      input: ["text"],
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
      contextWindow: 100_000,
      maxTokens: 1000,
    });

    const threadId = "cli:local:cut";
    const runner = (maxRetries = 3) =>
      createAgentRunner({
        threadId,
        store,
        model: model(),
        apiKey: "k",
        systemPrompt: "test",
        tools: [],
        maxToolRounds: 5,
        maxRetries,
        maxRetryWaitSeconds: 60,
        maxAnswerChars: 200_000,
        retryBaseDelayMs: 20,
        streamIdleTimeoutSeconds: 300,
      });

    const lastAnswer = () =>
      store
        .loadContext(threadId)
        .filter((m): m is AssistantMessage => "role" in m && m.role === "assistant")
        .at(-1);

    it("a whole stream still ends as stop", async () => {
      behaviour = () => wire.opening + wire.text("all of it") + wire.ending("all of it");
      const result = await runner().prompt({ text: "hi" });
      expect(result.stopReason).toBe("stop");
      expect(result.text).toBe("all of it");
      expect(requests).toBe(1);
      expect(lastAnswer()?.stopReason).toBe("stop");
    });

    it("cut before any of the answer came: retried, the next attempt's answer is the answer", async () => {
      behaviour = (n) =>
        n === 0 ? wire.opening : wire.opening + wire.text("second") + wire.ending("second");
      const result = await runner().prompt({ text: "hi" });
      expect(requests).toBe(2);
      expect(result.stopReason).toBe("stop");
      expect(result.text).toBe("second");
      expect(lastAnswer()).toMatchObject({ stopReason: "stop", content: [{ text: "second" }] });
    });

    it("an empty answer stream is retried too, within GUPPY_MAX_RETRIES", async () => {
      behaviour = () => "";
      const result = await runner(2).prompt({ text: "hi" });
      expect(requests).toBe(3);
      expect(result.stopReason).toBe("error");
      expect(result.errorMessage).toContain("cut off mid-stream");
    });

    it("cut after some text: kept, ended in error with a note, not retried", async () => {
      behaviour = () => wire.opening + wire.text("half an ans");
      const result = await runner().prompt({ text: "hi" });
      expect(requests).toBe(1);
      expect(result.stopReason).toBe("error");
      expect(result.text).toBe("half an ans");
      expect(result.errorMessage).toBe(
        "The provider's answer was cut off mid-stream (its stream ended without a finish reason).",
      );
      const stored = lastAnswer();
      expect(stored).toMatchObject({ stopReason: "error", content: [{ text: "half an ans" }] });
      expect(Object.getOwnPropertyDescriptor(stored, "stopReason")).toHaveProperty("value");
      expect(JSON.stringify(store.readLog(threadId))).toContain("half an ans");
    });

    it.runIf(api === "openai-completions")(
      "cut after a tool call's arguments: the call is not run, the answer ends in error",
      async () => {
        behaviour = () =>
          wire.opening +
          completionsChunk(
            {
              tool_calls: [
                {
                  index: 0,
                  id: "call_1",
                  type: "function",
                  function: { name: "bash", arguments: '{"command":"echo hi"}' },
                },
              ],
            },
            null,
          );
        const result = await runner().prompt({ text: "hi" });
        expect(requests).toBe(1);
        expect(result.stopReason).toBe("error");
        expect(result.errorMessage).toContain("cut off mid-stream");
        const stored = lastAnswer();
        expect(stored?.stopReason).toBe("error");
        expect(stored?.content).toMatchObject([{ type: "toolCall", name: "bash" }]);
      },
    );
  },
);
