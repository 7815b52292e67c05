import { parseMarkdown } from "chat";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { endsInsideCodeBlock, reopenAt } from "../../src/channels/bridge/markdown-scan.js";
import {
  renderPart,
  splitMessage,
  splitMessageParts,
} from "../../src/channels/bridge/split-message.js";
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

  it("cuts at a line inside a code block rather than through a fence line the window ends in", () => {
    const text = "```ts\n        \n\n      \n!!!!!!\n!!!!!!!!!!\n```ts\n```";
    const parts = splitMessageParts(text, 44).map(renderPart);
    for (const p of parts) {
      expect(p.length).toBeLessThanOrEqual(44);
      expect(unbalanced(p)).toBe(false);
    }
    expect(parts.at(-1)).toMatch(/^```ts\n/);
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

/** MarkdownV2-like escaping: every special character doubles in length. */
const escapeV2 = (s: string): string => s.replace(/[_*[\]()~`>#+\-=|{}.!]/g, "\\$&");

const word = fc.stringMatching(/^[a-z.!_()#-]{1,12}$/);
const prose = fc
  .array(fc.array(word, { minLength: 1, maxLength: 14 }), { minLength: 1, maxLength: 60 })
  .chain((lines) =>
    fc
      .array(fc.constantFrom("\n", "\n\n"), { minLength: lines.length, maxLength: lines.length })
      .map((breaks) => lines.map((l, i) => l.join(" ") + (breaks[i] as string)).join("")),
  );

describe("splitMessage packing", () => {
  it("property: with a measure that escapes characters, every part fits and every part but the last is well filled", () => {
    fc.assert(
      fc.property(prose, fc.integer({ min: 200, max: 1200 }), (text, limit) => {
        const parts = splitMessage(text, limit, escapeV2);
        parts.forEach((part, i) => {
          const size = escapeV2(part).length;
          expect(size).toBeLessThanOrEqual(limit);
          if (i < parts.length - 1) expect(size).toBeGreaterThan(limit / 5);
        });
        // Nothing is lost (marks closing and reopening a span cut between parts aside).
        const letters = (t: string) => t.replace(/[\s*_~`]/g, "");
        expect(letters(parts.join(""))).toBe(letters(text));
      }),
      { numRuns: 200 },
    );
  });

  it("property: with a measure that escapes characters and code blocks, every part fits and closes its block", () => {
    fc.assert(
      fc.property(markdown, fc.integer({ min: 60, max: 600 }), (text, limit) => {
        const parts = splitMessage(text, limit, escapeV2);
        parts.forEach((part, i) => {
          expect(escapeV2(part).length).toBeLessThanOrEqual(limit);
          if (i < parts.length - 1 || !unbalanced(text)) expect(unbalanced(part)).toBe(false);
        });
      }),
      { numRuns: 200 },
    );
  });
});

/** The words of `markdown` in order, each prefixed with the styles it is in (B bold, I italic). */
function styledWords(markdown: string): string[] {
  const out: string[] = [];
  type Node = { type: string; value?: string; children?: Node[] };
  const walk = (node: Node, styles: string): void => {
    if (node.type === "text") {
      for (const w of (node.value ?? "").split(/\s+/)) if (w) out.push(`${styles}${w}`);
    }
    const inner =
      node.type === "strong" ? `${styles}B` : node.type === "emphasis" ? `${styles}I` : styles;
    for (const child of node.children ?? []) walk(child, inner);
  };
  walk(parseMarkdown(markdown) as Node, "");
  return out;
}

/** Paragraphs of words, lines broken within them, some runs of words in **bold** or _italic_. */
const styledText = fc
  .array(
    fc.record({
      words: fc.array(fc.stringMatching(/^[a-z]{1,8}$/), { minLength: 1, maxLength: 30 }),
      style: fc.constantFrom("", "**", "_"),
      end: fc.constantFrom(" ", "\n", "\n\n"),
    }),
    { minLength: 1, maxLength: 25 },
  )
  .map((runs) =>
    runs
      .map((r) => `${r.style}${r.words.join(" ")}${r.style}${r.end}`)
      .join("")
      .trim(),
  );

describe("inline formatting across a cut", () => {
  it("closes bold at the end of a part and reopens it at the start of the next", () => {
    const words = Array.from({ length: 1500 }, (_, i) => `bold${i}`);
    const text = `Intro.\n\n**${words.join(" ")}** end.`;
    const parts = splitMessage(text, 4096, renderTelegramMarkdown);
    expect(parts.length).toBeGreaterThan(2);
    parts.forEach((part, i) => {
      if (i > 0) expect(part.startsWith("**bold")).toBe(true);
      if (i < parts.length - 1) expect(part.endsWith("**")).toBe(true);
      // Rendered as bold, never as literal asterisks.
      expect(renderTelegramMarkdown(part)).not.toContain("\\*\\*");
    });
    expect(parts.flatMap(styledWords)).toEqual(styledWords(text));
  });

  it("property: every word keeps its bold or italic style across the parts", () => {
    fc.assert(
      fc.property(styledText, fc.integer({ min: 40, max: 300 }), (text, limit) => {
        const parts = splitMessage(text, limit);
        for (const part of parts) expect(part.length).toBeLessThanOrEqual(limit);
        expect(parts.flatMap(styledWords)).toEqual(styledWords(text));
      }),
      { numRuns: 60 },
    );
  });

  it("reopenAt gives what a continuation starts with: the open code block's fence, or open marks", () => {
    const code = "Look:\n\n```ts\nconst a = 1;\nconst b";
    expect(reopenAt(code, code.length)).toBe("```ts\n");
    const bold = "Some **bold and _both here";
    expect(reopenAt(`${bold} still_ on** end`, bold.length)).toBe("**_");
    expect(reopenAt("**done** now", 12)).toBe("");
  });
});

describe("splitMessage for Telegram", () => {
  const sizes = (parts: string[]) => parts.map((p) => renderTelegramMarkdown(p).length);

  it("keeps every part within 4,096 characters once rendered as MarkdownV2", () => {
    // Characters MarkdownV2 escapes double in length: the raw text fits, the rendering would not.
    const text = Array.from({ length: 120 }, () => "a.b-c!d(e)f_g*h[i]j".repeat(4)).join("\n");
    const parts = splitMessage(text, 4096, renderTelegramMarkdown);
    expect(parts.length).toBeGreaterThan(2);
    for (const size of sizes(parts)) expect(size).toBeLessThanOrEqual(4096);
  });

  it("packs a reply that escaping makes longer than a message into as few messages as it needs", () => {
    const text = Array.from(
      { length: 60 },
      (_, i) => `Item ${i}. Cost: $5.00 (approx.) - see #${i}! a+b=c {x} | y > z_${i}*`,
    ).join("\n\n");
    const whole = renderTelegramMarkdown(text).length;
    expect(text.length).toBeLessThan(4096);
    expect(whole).toBeGreaterThan(4096);
    const parts = splitMessage(text, 4096, renderTelegramMarkdown);
    expect(parts).toHaveLength(Math.ceil(whole / 4096));
    for (const size of sizes(parts)) expect(size).toBeLessThanOrEqual(4096);
  });

  it("takes the rest whole once it fits, though the part before grew far more when rendered", () => {
    // A link renders as [text](url): twice its length. The plain rest after it does not grow.
    const text = `https://example.com/${"a".repeat(5000)} tail`;
    const parts = splitMessage(text, 4096, renderTelegramMarkdown);
    expect(parts).toHaveLength(2);
    expect(parts[1]).toMatch(/ tail$/);
    for (const size of sizes(parts)) expect(size).toBeLessThanOrEqual(4096);
  });

  it("fills the first message with a code block too long for one, not just the sentence before it", () => {
    const lines = Array.from(
      { length: 300 },
      (_, i) => `print("line ${i} \\\\ back \` tick")  # ${i}`,
    );
    const text = `Here:\n\n\`\`\`python\n${lines.join("\n")}\n\`\`\`\n\nDone.`;
    const parts = splitMessage(text, 4096, renderTelegramMarkdown);
    expect(parts[0]).toMatch(/^Here:\n\n```python\nprint/);
    expect(parts).toHaveLength(Math.ceil(renderTelegramMarkdown(text).length / 4096));
    for (const size of sizes(parts)) expect(size).toBeLessThanOrEqual(4096);
    for (const p of parts) expect(unbalanced(p)).toBe(false);
    expect(parts.at(-1)).toMatch(/Done\.$/);
  });
});
