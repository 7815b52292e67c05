import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { tempHome } from "../helpers/run-cli.js";
import {
  readSse,
  type ServeProcess,
  startServe,
  threadMessages,
  waitFor,
} from "./serve-harness.js";

type WireApi = "openai-completions" | "anthropic-messages";

const sse = (event: string | undefined, data: object) =>
  `${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`;

const chunk = (delta: object, finish: string | null) =>
  sse(undefined, {
    id: "c",
    object: "chat.completion.chunk",
    created: 1,
    model: "m",
    choices: [{ index: 0, delta, finish_reason: finish }],
  });

/** One answer on the wire: its opening, `text` as one delta, its ending (finish reason, end marker). */
const WIRE: Record<WireApi, { opening: string; text: (t: string) => string; ending: string }> = {
  "openai-completions": {
    opening: chunk({ role: "assistant", content: "" }, null),
    text: (t) => chunk({ content: t }, null),
    ending: `${chunk({}, "stop")}data: [DONE]\n\n`,
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
    text: (t) =>
      sse("content_block_delta", {
        type: "content_block_delta",
        index: 0,
        delta: { type: "text_delta", text: t },
      }),
    ending:
      sse("content_block_stop", { type: "content_block_stop", index: 0 }) +
      sse("message_delta", {
        type: "message_delta",
        delta: { stop_reason: "end_turn", stop_sequence: null },
        usage: { output_tokens: 3 },
      }) +
      sse("message_stop", { type: "message_stop" }),
  },
};

/** A provider whose n-th answer (0-based) is `body(n)`, sent whole, after which the response ends cleanly. */
async function provider(api: WireApi, body: (n: number) => string) {
  const sockets = new Set<Socket>();
  let requests = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const n = requests++;
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(body(n));
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    requests: () => requests,
    env: (): Record<string, string> => ({
      GUPPY_MODEL: api === "anthropic-messages" ? "anthropic/mock-claude" : "openai/mock-gpt",
      GUPPY_BASE_URL: api === "anthropic-messages" ? url : `${url}/v1`,
      GUPPY_API: api,
      GUPPY_API_KEY: "test-key",
      GUPPY_MAX_RETRIES: "3",
      GUPPY_SANDBOX: "host",
    }),
    stop: () => {
      for (const s of sockets) s.destroy();
      return new Promise((r) => server.close(r));
    },
  };
}

describe.each<WireApi>(["openai-completions", "anthropic-messages"])(
  "a provider stream cut without a finish reason (guppy serve, %s)",
  (api) => {
    const wire = WIRE[api];
    const whole = (t: string) => wire.opening + wire.text(t) + wire.ending;
    const stops: Array<() => unknown> = [];
    afterEach(async () => {
      for (const stop of stops.splice(0).reverse()) await stop();
    });

    it("is retried when nothing came, kept as a cut answer with an error note when some did; a whole one ends as stop", async () => {
      // Request 0: a whole answer. 1: cut before any text, 2: its retry. 3: cut after some text.
      const llm = await provider(api, (n) => {
        if (n === 0) return whole("first answer");
        if (n === 1) return wire.opening;
        if (n === 2) return whole("second answer");
        return wire.opening + wire.text("half an ans");
      });
      stops.push(llm.stop);
      const { home, cleanup } = tempHome();
      stops.push(cleanup);
      const s: ServeProcess = await startServe(home, llm.env());
      stops.push(async () => {
        if (s.child.exitCode === null) {
          s.child.kill("SIGKILL");
          await s.exited;
        }
      });
      const id = "http:api:cut";
      const send = (text: string) =>
        s.api(`/v1/threads/${id}/messages`, { method: "POST", body: JSON.stringify({ text }) });

      await send("one");
      await waitFor(async () => ((await threadMessages(s, id)).length === 2 ? true : undefined));
      const events = await s.api(`/v1/threads/${id}/events`);
      let seen = 0;
      const finals = readSse(events, (event) => event === "final" && ++seen === 2);

      await send("two");
      await waitFor(async () => ((await threadMessages(s, id)).length === 4 ? true : undefined));
      await send("three");
      const all = (await finals).filter((e) => e.event === "final").map((e) => e.data);
      expect(llm.requests()).toBe(4);

      // Cut before any text: retried, the retry's answer is the answer.
      expect(all[0]).toMatchObject({ stop_reason: "stop" });
      expect(String(all[0]?.text)).toContain("second answer");
      // Cut after some text: kept, ended in error, with a one-line note to the user.
      expect(all[1]).toMatchObject({ stop_reason: "error" });
      expect(String(all[1]?.text)).toContain("half an ans");
      expect(String(all[1]?.error)).toBe(
        "The provider's answer was cut off mid-stream (its stream ended without a finish reason).",
      );

      const dir = join(home, "http", "api", "cut");
      const context = readFileSync(join(dir, "context.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map(
          (line) =>
            JSON.parse(line) as {
              role?: string;
              stopReason?: string;
              errorMessage?: string;
              content?: unknown;
            },
        );
      const answers = context.filter((m) => m.role === "assistant");
      expect(answers.map((m) => m.stopReason)).toEqual(["stop", "stop", "error"]);
      expect(JSON.stringify(answers[1]?.content)).toContain("second answer");
      expect(JSON.stringify(answers[2]?.content)).toContain("half an ans");
      expect(answers[2]?.errorMessage).toContain("cut off mid-stream");
      const log = readFileSync(join(dir, "log.jsonl"), "utf8");
      expect(log).toContain("half an ans");
      expect(readFileSync(join(home, "logs", "gateway.log"), "utf8")).toMatch(
        /Model request of http:api:cut failed; retry 1 of 3/,
      );
    });
  },
);
