import type { StreamFn } from "@mariozechner/pi-agent-core";
import { describe, expect, it } from "vitest";
import { createRedactor } from "../../src/logging/redact.js";
import { redactEvents, redactRequests } from "../../src/runner/agent-events.js";
import type { RunnerEvent } from "../../src/types.js";

const KEY = "sk-test-0123456789abcdef";
const redactor = createRedactor([{ name: "GUPPY_API_KEY", value: KEY }]);

describe("redactEvents", () => {
  it("holds a delta's possible key start back, and releases it before the next other event", () => {
    const seen: RunnerEvent[] = [];
    const emit = redactEvents(redactor, (e) => seen.push(e));
    emit({ type: "text_delta", delta: "key: sk-test-01" });
    emit({ type: "text_delta", delta: "23456789abcdef, bye sk-" });
    emit({ type: "tool_call", toolCallId: "c1", name: "bash", args: { command: `echo ${KEY}` } });
    emit({ type: "run_end", text: `key: ${KEY}`, stopReason: "stop" });
    expect(seen).toEqual([
      { type: "text_delta", delta: "key: " },
      { type: "text_delta", delta: "[redacted: GUPPY_API_KEY], bye " },
      { type: "text_delta", delta: "sk-" },
      {
        type: "tool_call",
        toolCallId: "c1",
        name: "bash",
        args: { command: "echo [redacted: GUPPY_API_KEY]" },
      },
      { type: "run_end", text: "key: [redacted: GUPPY_API_KEY]", stopReason: "stop" },
    ]);
  });
});

describe("redactRequests", () => {
  it("sends the messages and system prompt redacted, leaving the run's own context as it was", () => {
    let sent: Parameters<StreamFn>[1] | undefined;
    const base = ((_model, context) => {
      sent = context;
      return undefined as unknown as ReturnType<StreamFn>;
    }) as StreamFn;
    const messages = [{ role: "user" as const, content: `use ${KEY}`, timestamp: 0 }];
    redactRequests(redactor, base)({} as Parameters<StreamFn>[0], {
      systemPrompt: `key ${KEY}`,
      messages,
    });
    expect(sent?.systemPrompt).toBe("key [redacted: GUPPY_API_KEY]");
    expect(sent?.messages[0]?.content).toBe("use [redacted: GUPPY_API_KEY]");
    expect(messages[0]?.content).toBe(`use ${KEY}`);
  });
});
