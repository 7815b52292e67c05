import { describe, expect, it } from "vitest";
import { contextTools, TOOL_TEXT_LIMIT } from "../../../src/channels/http/context-tools-route.js";

const line = (value: unknown) => JSON.stringify(value);
/** A context.jsonl's text as the state seam reads it: its records, a torn line left out. */
const records = (text: string) =>
  text.split("\n").flatMap((l) => {
    try {
      return l.trim() ? [JSON.parse(l) as Record<string, unknown>] : [];
    } catch {
      return [];
    }
  });

describe("contextTools (GET /v1/threads/{id}/tools from context.jsonl)", () => {
  it("pairs each call with its result and the user message it follows, past torn lines", () => {
    const text = [
      line({ role: "compaction", summary: "earlier", method: "summary", timestamp: 1 }),
      line({ role: "user", content: [{ type: "text", text: "list files" }], timestamp: 2 }),
      line({
        role: "assistant",
        content: [
          { type: "text", text: "Looking." },
          { type: "toolCall", id: "c1", name: "bash", arguments: { command: "ls" } },
          { type: "toolCall", id: "c2", name: "read", arguments: { path: "x".repeat(3000) } },
        ],
        timestamp: Date.UTC(2026, 0, 2),
      }),
      '{"role":"toolResult","toolCallId":"c1"', // torn by a crash
      line({
        role: "toolResult",
        toolCallId: "c2",
        toolName: "read",
        content: [{ type: "text", text: "y".repeat(TOOL_TEXT_LIMIT + 10) }],
        isError: true,
        timestamp: 4,
      }),
      line({ role: "user", content: "steer: stop", timestamp: 5 }),
      line({
        role: "assistant",
        content: [{ type: "toolCall", id: "c3", name: "bash", arguments: { command: "pwd" } }],
        timestamp: 6,
      }),
      line({
        role: "toolResult",
        toolCallId: "c3",
        toolName: "bash",
        content: [{ type: "text", text: "/home" }],
        isError: false,
        timestamp: 7,
      }),
      "",
    ].join("\n");
    const answer = contextTools("http:api:t", records(text));
    expect(answer.thread_id).toBe("http:api:t");
    expect(answer.compacted).toBe(true);
    expect(answer.tools.map((t) => [t.id, t.name, t.prompt])).toEqual([
      ["c1", "bash", "list files"],
      ["c2", "read", "list files"],
      ["c3", "bash", "steer: stop"],
    ]);
    const [c1, c2, c3] = answer.tools;
    // The torn line was c1's result: it has none.
    expect(c1).toMatchObject({ result: null, is_error: false, date: "2026-01-02T00:00:00.000Z" });
    expect(c2?.is_error).toBe(true);
    expect(c2?.result_truncated).toBe(true);
    expect(c2?.result).toHaveLength(TOOL_TEXT_LIMIT + 1);
    expect((c2?.args as { path: string } | undefined)?.path).toHaveLength(TOOL_TEXT_LIMIT + 1);
    expect(c3).toMatchObject({
      result: "/home",
      result_truncated: false,
      args: { command: "pwd" },
    });
  });

  it("gives none for an empty context, and compacted only when it begins with a compaction", () => {
    expect(contextTools("t", records(""))).toEqual({ thread_id: "t", compacted: false, tools: [] });
    const plain = line({ role: "user", content: "hi", timestamp: 1 });
    expect(contextTools("t", records(plain)).compacted).toBe(false);
  });
});
