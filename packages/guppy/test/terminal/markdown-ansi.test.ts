import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { createStyles, type Styles } from "../../src/terminal/ansi.js";
import { createChatRenderer } from "../../src/terminal/chat-renderer.js";
import { renderMarkdown } from "../../src/terminal/markdown-ansi.js";
import { completeBlocksEnd, displayWidth, rowsOf } from "../../src/terminal/markdown-stream.js";
import type { ThreadClientEvent } from "../../src/terminal/thread-client.js";

/** Styles that show as tags, so what is styled how is plain to read. */
const tags: Styles = {
  dim: (s) => `<dim>${s}</dim>`,
  red: (s) => `<red>${s}</red>`,
  green: (s) => `<green>${s}</green>`,
  yellow: (s) => `<code>${s}</code>`,
  bold: (s) => `<b>${s}</b>`,
  italic: (s) => `<i>${s}</i>`,
  underline: (s) => `<u>${s}</u>`,
  cyan: (s) => `<cyan>${s}</cyan>`,
};

describe("renderMarkdown", () => {
  it("renders a fenced code block indented and in colour, its language above it", () => {
    expect(renderMarkdown("Run:\n\n```sh\nnpm ci\nnpm test\n```\n", tags)).toBe(
      "Run:\n\n<dim>  sh</dim>\n  <code>npm ci</code>\n  <code>npm test</code>\n",
    );
  });

  it("renders bold, italics, inline code and links", () => {
    expect(
      renderMarkdown(
        "Some **bold**, *italic*, `x < 1` and [docs](https://a.example) or https://b.example",
        tags,
      ),
    ).toBe(
      "Some <b>bold</b>, <i>italic</i>, <code>x < 1</code> and <u>docs</u> <dim>(https://a.example)</dim> or <u>https://b.example</u>",
    );
  });

  it("renders lists with bullets or numbers, nested ones indented", () => {
    expect(renderMarkdown("- one\n- two **2**\n  - nested\n\n3. three\n4. four\n", tags)).toBe(
      "<dim>•</dim> one\n<dim>•</dim> two <b>2</b>\n  <dim>•</dim> nested\n\n<dim>3.</dim> three\n<dim>4.</dim> four\n",
    );
  });

  it("renders headings bold without their #, the first level underlined too", () => {
    expect(renderMarkdown("# Title\n\n## Part *one*\ntext", tags)).toBe(
      "<b><u>Title</u></b>\n\n<b>Part <i>one</i></b>\ntext",
    );
  });

  it("writes real ANSI styles, and plain text when colour is off", () => {
    expect(renderMarkdown("**bold**", createStyles(true))).toBe("\x1b[1mbold\x1b[22m");
    expect(renderMarkdown("# Title\n\n- a\n\n**b**", createStyles(false))).toBe(
      "Title\n\n• a\n\nb",
    );
  });

  it("shows a table as written", () => {
    const table = "| a | b |\n|---|---|\n| 1 | 2 |\n";
    expect(renderMarkdown(table, tags)).toBe(table);
  });
});

describe("streaming Markdown in the chat", () => {
  it("knows where complete blocks end", () => {
    expect(completeBlocksEnd("para one\n\n")).toBe(0); // the next line has not begun
    expect(completeBlocksEnd("para one\n\nN")).toBe("para one\n\n".length);
    expect(completeBlocksEnd("- a\n\n  more of a")).toBe(0); // an indented continuation
    expect(completeBlocksEnd("# Title\nte")).toBe("# Title\n".length);
    expect(completeBlocksEnd("```\ncode\n\nmore\n")).toBe(0); // a blank line inside a fence
    expect(completeBlocksEnd("```\ncode\n\nmore\n```\n")).toBe("```\ncode\n\nmore\n```\n".length);
  });

  it("counts the rows text takes, wide characters and wrapping included", () => {
    expect(displayWidth("日本")).toBe(4);
    expect(rowsOf("abc\n", 80)).toBe(2);
    expect(rowsOf(`${"x".repeat(100)}\nabc`, 80)).toBe(3);
  });

  /** The renderer on a fake 80×24 terminal; what it wrote, as one string. */
  function terminal(events: ThreadClientEvent[]): string {
    const out = new PassThrough();
    let text = "";
    out.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8");
    });
    const show = createChatRenderer({
      out,
      styles: tags,
      spinner: { start() {}, stop() {}, active: false },
      markdown: { size: () => ({ columns: 80, rows: 24 }) },
    });
    for (const event of events) show(event);
    return text;
  }

  it("shows the text as it streams, then redraws each finished block rendered", () => {
    const text = terminal([
      { type: "text_delta", delta: "Hello **wor" },
      { type: "text_delta", delta: "ld**\n\n- one\n" },
      { type: "text_delta", delta: "- two\n" },
      { type: "run_end", text: "", stopReason: "stop" },
    ]);
    // The paragraph streamed raw; once the list began, the cursor went up over its rows and the
    // list's first line, rewrote it rendered and the list's line raw; the end rendered the list.
    expect(text).toBe(
      "Hello **world**\n\n- one\n\x1b[3A\r\x1b[JHello <b>world</b>\n\n- one\n- two\n\x1b[2A\r\x1b[J<dim>•</dim> one\n<dim>•</dim> two\n",
    );
  });

  it("renders what streamed before a tool call when the call comes", () => {
    const text = terminal([
      { type: "text_delta", delta: "Let me *check*." },
      { type: "tool_call", toolCallId: "c1", name: "bash", args: { command: "ls" } },
    ]);
    expect(text).toBe("Let me *check*.\r\x1b[JLet me <i>check</i>.\n<dim>  ▸ bash ls</dim>\n");
  });

  it("leaves answers as written without the markdown option", () => {
    const out = new PassThrough();
    let text = "";
    out.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8");
    });
    const show = createChatRenderer({
      out,
      styles: tags,
      spinner: { start() {}, stop() {}, active: false },
    });
    show({ type: "text_delta", delta: "**raw**\n\n- a\n" });
    show({ type: "run_end", text: "", stopReason: "stop" });
    expect(text).toBe("**raw**\n\n- a\n");
  });
});
