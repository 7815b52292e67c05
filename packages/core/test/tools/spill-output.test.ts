import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AfterToolCallContext } from "@mariozechner/pi-agent-core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createToolResultSpill } from "../../src/tools/spill-output.js";

const ctx = (name: string, text: string, details: unknown = {}) =>
  ({
    toolCall: { type: "toolCall", id: "t1", name, arguments: {} },
    result: { content: [{ type: "text", text }], details },
  }) as unknown as AfterToolCallContext;

describe("tool result spill (every tool)", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "guppy-spill-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const spill = () => createToolResultSpill({ maxChars: 1_000, artifactsDir: () => dir });

  it("keeps a result up to the limit as it is", async () => {
    expect(await spill()(ctx("web_fetch", "x".repeat(1_000)))).toBeUndefined();
    expect(readdirSync(dir)).toEqual([]);
  });

  it("replaces a longer result by head + tail and a note naming the saved file", async () => {
    const text = Array.from({ length: 500 }, (_, i) => `row ${i}`).join("\n");
    const out = await spill()(ctx("web_fetch", text));
    if (!out?.content) throw new Error("expected the result to be replaced");
    const shown = (out.content[0] as { text: string }).text;
    expect(shown.length).toBeLessThanOrEqual(1_000);
    expect(shown.startsWith("row 0\n")).toBe(true);
    expect(shown.endsWith("row 499")).toBe(true);
    const path = (out.details as { fullOutputPath: string }).fullOutputPath;
    expect(shown).toContain(path);
    expect(path.startsWith(dir)).toBe(true);
    expect(readFileSync(path, "utf8")).toBe(text);
  });

  it("leaves alone what a tool already spilled itself, and read's own pages", async () => {
    const long = "y".repeat(5_000);
    expect(await spill()(ctx("bash", long, { fullOutputPath: "/x" }))).toBeUndefined();
    expect(await spill()(ctx("read", long))).toBeUndefined();
    expect(readdirSync(dir)).toEqual([]);
  });
});
