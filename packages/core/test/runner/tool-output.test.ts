import type { AgentEvent } from "@mariozechner/pi-agent-core";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  createEventTranslator,
  lastOutputLines,
  newRunState,
  TOOL_OUTPUT_INTERVAL_MS,
} from "../../src/runner/agent-events.js";
import type { RunnerEvent } from "../../src/types.js";

const update = (text: string): AgentEvent => ({
  type: "tool_execution_update",
  toolCallId: "c1",
  toolName: "bash",
  args: {},
  partialResult: { content: [{ type: "text", text }], details: {} },
});

describe("a running tool's output as tool_output events", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const translator = () => {
    const events: RunnerEvent[] = [];
    const run = newRunState();
    const t = createEventTranslator({
      run: () => run,
      maxToolRounds: 10,
      emit: (e) => events.push(e),
      countUsage: () => {},
      persist: () => {},
    });
    return { events, handle: t.handle };
  };

  it("shows the first update at once, then at most one per interval: the latest, none after the result", () => {
    const { events, handle } = translator();
    handle(update("a"));
    for (const text of ["a\nb", "a\nb\nc", "a\nb\nc\nd"]) handle(update(text));
    const outputs = () => events.filter((e) => e.type === "tool_output");
    expect(outputs().map((e) => e.type === "tool_output" && e.text)).toEqual(["a"]);
    vi.advanceTimersByTime(TOOL_OUTPUT_INTERVAL_MS);
    expect(outputs().map((e) => e.type === "tool_output" && e.text)).toEqual(["a", "a\nb\nc\nd"]);
    handle(update("a\nb\nc\nd\ne"));
    handle({
      type: "tool_execution_end",
      toolCallId: "c1",
      toolName: "bash",
      result: { content: [{ type: "text", text: "done" }], details: {} },
      isError: false,
    });
    vi.advanceTimersByTime(TOOL_OUTPUT_INTERVAL_MS * 4);
    expect(outputs()).toHaveLength(2);
    expect(events.at(-1)).toMatchObject({ type: "tool_result", text: "done" });
  });

  it("carries the last lines only", () => {
    const many = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join("\n");
    expect(lastOutputLines(`${many}\n\n`).split("\n")).toEqual(
      Array.from({ length: 8 }, (_, i) => `line ${i + 23}`),
    );
    expect(lastOutputLines("x".repeat(5000))).toHaveLength(1000);
    // Past 1,000 characters it starts at a whole line.
    expect(lastOutputLines(`${"a".repeat(600)}\n${"b".repeat(600)}\nend`)).toBe(
      `${"b".repeat(600)}\nend`,
    );
  });
});
