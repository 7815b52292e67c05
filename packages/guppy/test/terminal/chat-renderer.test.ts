import { PassThrough } from "node:stream";
import type { RunnerEvent } from "@guppy/core";
import { describe, expect, it } from "vitest";
import { createStyles } from "../../src/terminal/ansi.js";
import { createChatRenderer } from "../../src/terminal/chat-renderer.js";

/** The renderer writing to a buffer, without colours or a spinner. */
function render(events: RunnerEvent[]): string {
  const out = new PassThrough();
  let text = "";
  out.on("data", (chunk: Buffer) => {
    text += chunk.toString("utf8");
  });
  const spinner = { start() {}, stop() {}, active: false };
  const show = createChatRenderer({ out, styles: createStyles(false), spinner });
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
});
