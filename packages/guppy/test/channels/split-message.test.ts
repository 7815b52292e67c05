import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  endsInsideCodeBlock,
  renderPart,
  splitMessage,
  splitMessageParts,
} from "../../src/channels/format/split-message.js";
import { renderTelegramMarkdown } from "../../src/channels/telegram/telegram-format.js";

const unbalanced = endsInsideCodeBlock;

const markdownLine = fc.oneof(
  fc.constant(""),
  fc.constant("```ts"),
  fc.constant("```"),
  fc.string({ minLength: 0, maxLength: 120 }).map((s) => s.replace(/\n|`{3,}|~{3,}/g, "x")),
  fc.constantFrom("- item one", "**bold** and _it_", "a_b*c[d](e)", "    indented code"),
);
const markdown = fc.array(markdownLine, { maxLength: 80 }).map((lines) => lines.join("\n"));

describe("splitMessageParts", () => {
  it("keeps short text whole", () => {
    expect(splitMessage("hello\n\nworld", 4096)).toEqual(["hello\n\nworld"]);
  });

  it("cuts at a paragraph boundary rather than inside a paragraph", () => {
    const a = "a".repeat(60);
    const b = "b".repeat(30);
    const parts = splitMessage(`${a}\n\n${b} ${b}`, 80);
    expect(parts).toEqual([a, `${b} ${b}`]);
  });

  it("moves a whole code block to the next part instead of cutting it", () => {
    const text = `${"intro ".repeat(5)}\n\n\`\`\`js\n${"x();\n".repeat(8)}\`\`\`\ntail`;
    const parts = splitMessage(text, 70);
    expect(parts[0]).toBe("intro ".repeat(5));
    expect(parts[1]).toMatch(/^```js\n/);
    expect(parts.every((p) => !unbalanced(p))).toBe(true);
  });

  it("closes and reopens a code block longer than a part", () => {
    const code = Array.from({ length: 400 }, (_, i) => `line ${i}`).join("\n");
    const parts = splitMessage(`\`\`\`python\n${code}\n\`\`\``, 500);
    expect(parts.length).toBeGreaterThan(4);
    for (const p of parts) {
      expect(p.length).toBeLessThanOrEqual(500);
      expect(p.startsWith("```python\n")).toBe(true);
      expect(p.endsWith("\n```")).toBe(true);
    }
    const inner = parts.map((p) => p.slice("```python\n".length, -"\n```".length)).join("\n");
    expect(inner).toBe(code);
  });

  it("property: every part fits, no part leaves a code block open, nothing but cut newlines is lost", () => {
    fc.assert(
      fc.property(markdown, fc.integer({ min: 40, max: 400 }), (text, limit) => {
        const parts = splitMessageParts(text, limit);
        parts.forEach((part, i) => {
          const rendered = renderPart(part);
          expect(rendered.length).toBeLessThanOrEqual(limit);
          // Only the last part may end inside a block, and only when the text itself does.
          if (i < parts.length - 1 || !unbalanced(text)) expect(unbalanced(rendered)).toBe(false);
        });
        const bodies = parts.map((p) => p.body).join("");
        expect(bodies.replace(/\n/g, "")).toBe(text.replace(/\n/g, ""));
      }),
      { numRuns: 300 },
    );
  });

  it("never splits a surrogate pair", () => {
    const text = "😀".repeat(100);
    const parts = splitMessage(text, 33);
    expect(parts.join("")).toBe(text);
    for (const p of parts) expect(p).not.toMatch(/[\uD800-\uDBFF]$|^[\uDC00-\uDFFF]/);
  });
});

describe("splitMessage for Telegram", () => {
  it("keeps every part within 4,096 characters once rendered as MarkdownV2", () => {
    // Characters MarkdownV2 escapes double in length: the raw text fits, the rendering would not.
    const text = Array.from({ length: 120 }, () => "a.b-c!d(e)f_g*h[i]j".repeat(4)).join("\n");
    const parts = splitMessage(text, 4096, renderTelegramMarkdown);
    expect(parts.length).toBeGreaterThan(2);
    for (const p of parts) expect(renderTelegramMarkdown(p).length).toBeLessThanOrEqual(4096);
  });
});
