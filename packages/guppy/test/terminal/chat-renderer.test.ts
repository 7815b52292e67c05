import { PassThrough } from "node:stream";
import type { RunnerEvent } from "@guppy/core";
import { describe, expect, it } from "vitest";
import { createStyles } from "../../src/terminal/ansi.js";
import { createChatRenderer } from "../../src/terminal/chat-renderer.js";
import type { ThreadClientEvent } from "../../src/terminal/thread-client.js";

/** The renderer writing to a buffer, without colours or a spinner. */
function render(events: ThreadClientEvent[], liveOutput = false): string {
  const out = new PassThrough();
  let text = "";
  out.on("data", (chunk: Buffer) => {
    text += chunk.toString("utf8");
  });
  const spinner = { start() {}, stop() {}, active: false };
  const show = createChatRenderer({ out, styles: createStyles(false), spinner, liveOutput });
  for (const event of events) show(event);
  return text;
}

describe("the chat renderer", () => {
  it("shows what a model or tool wrote as text, never as terminal control sequences", () => {
    const attack = "\u001b[2J\u001b[H\u001b]0;PWNED\u0007\rFAKE: all tests passed";
    const text = render([
      { type: "text_delta", delta: `line one\n\tindented ${attack}\n` },
      { type: "text_delta", delta: "from windows\r\nsecond line\r\n" },
      { type: "tool_call", id: "c1", name: "bash", args: { command: `cat notes${attack}` } },
      { type: "tool_result", id: "c1", name: "bash", text: attack, isError: false },
    ] as RunnerEvent[]);
    // Nothing a terminal acts on is written: no ESC, BEL or carriage return.
    expect([...text].filter((c) => c === "\u001b" || c === "\u0007" || c === "\r")).toEqual([]);
    // The model's own lines and tabs stay; the rest shows as escapes.
    expect(text).toContain("line one\n\tindented \\x1b[2J\\x1b[H\\x1b]0;PWNED\\x07\\rFAKE");
    expect(text).toContain("from windows\nsecond line\n");
    expect(text).toContain("  ▸ bash cat notes\\x1b[2J");
    expect(text).toContain("    ✓ \\x1b[2J\\x1b[H\\x1b]0;PWNED\\x07\\rFAKE: all tests passed");
  });

  it("leaves a /compact's own compaction to its report, and shows an automatic one", () => {
    const compaction = (reason: "manual" | "threshold"): ThreadClientEvent => ({
      type: "compaction",
      method: "summary",
      reason,
      removedMessages: 12,
      tokensBefore: 8400,
      tokensAfter: 600,
    });
    expect(render([compaction("manual")])).toBe("");
    expect(render([compaction("threshold")])).toBe(
      "  (context compacted: summarised 12 older messages, ~8,400 → ~600 tokens)\n",
    );
  });

  const sent = (text: string, extra: Record<string, unknown> = {}): ThreadClientEvent[] => [
    { type: "tool_call", toolCallId: "s1", name: "send_message", args: { text, ...extra } },
    { type: "message", text },
    { type: "tool_result", toolCallId: "s1", name: "send_message", text: "Sent.", isError: false },
  ];
  const end = (text: string, delivered: boolean): ThreadClientEvent => ({
    type: "run_end",
    text,
    stopReason: "stop",
    ...(delivered ? { delivered: true as const } : {}),
  });
  const count = (text: string, part: string) => text.split(part).length - 1;

  it("shows an answer the run posted with send_message once, where the answer streams it again", () => {
    const text = render([
      ...sent("Half way there"),
      { type: "text_delta", delta: "Half way" },
      { type: "text_delta", delta: " there" },
      end("Half way there", true),
    ]);
    expect(count(text, "Half way there")).toBe(1);
    expect(text).toContain("  ▸ send_message\n");
  });

  it("shows an answer that only begins like the message whole, and one the end did not deliver", () => {
    const longer = render([
      ...sent("Half way there"),
      { type: "text_delta", delta: "Half way" },
      { type: "text_delta", delta: " there, and done." },
      end("Half way there, and done.", false),
    ]);
    expect(longer).toContain("Half way there, and done.\n");
    const shorter = render([
      ...sent("Half way there"),
      { type: "text_delta", delta: "Half way" },
      end("Half way", false),
    ]);
    expect(shorter.endsWith("Half way\n")).toBe(true);
    expect(count(shorter, "Half way")).toBe(2);
  });

  it("names another thread a message went to, with its text (not shown otherwise here)", () => {
    const text = render([
      {
        type: "tool_call",
        toolCallId: "s1",
        name: "send_message",
        args: { to: "http:api:other", text: "hello there" },
      },
    ]);
    expect(text).toContain("  ▸ send_message → http:api:other: hello there");
  });

  it("shows a running tool's last output lines under its line, redrawn in place, gone at its result", () => {
    const events = [
      { type: "tool_call", toolCallId: "c1", name: "bash", args: { command: "make" } },
      { type: "tool_output", toolCallId: "c1", name: "bash", text: "step 1" },
      { type: "tool_output", toolCallId: "c1", name: "bash", text: "step 1\nstep 2" },
      { type: "tool_result", toolCallId: "c1", name: "bash", text: "built", isError: false },
    ] as RunnerEvent[];
    const text = render(events, true);
    expect(text).toBe(
      [
        "  ▸ bash make\n",
        "    │ step 1\n",
        // Up one line and erase: the next lines replace it.
        "\x1b[1A\r\x1b[J",
        "    │ step 1\n    │ step 2\n",
        "\x1b[2A\r\x1b[J",
        "    ✓ built\n",
      ].join(""),
    );
    // Not a terminal (a pipe, `chat -m --debug`): no live lines at all.
    expect(render(events)).toBe("  ▸ bash make\n    ✓ built\n");
  });

  it("shows live output as text, never as control sequences", () => {
    const text = render(
      [{ type: "tool_output", toolCallId: "c1", name: "bash", text: "\u001b]0;PWNED\u0007" }],
      true,
    );
    expect(text).toBe("    │ \\x1b]0;PWNED\\x07\n");
  });
});
