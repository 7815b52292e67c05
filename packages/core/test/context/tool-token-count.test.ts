import type { Tool } from "@mariozechner/pi-ai";
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { createTokenCounter, loadEncoder } from "../../src/context/token-counter.js";

// Its own file: the BPE tables are loaded once per module instance, and this test starts without.
describe("tool definition tokens", () => {
  it("caches the byte bound per tools array until the BPE loads, then counts with the BPE", async () => {
    const c = createTokenCounter();
    expect(c.loaded).toBe(false);
    const tools: Tool[] = [
      {
        name: "read",
        description: "Read a file. ".repeat(40),
        parameters: Type.Object({ path: Type.String({ description: "Where the file is" }) }),
      },
    ];
    const bound = c.tools(tools);
    expect(bound).toBeGreaterThan(480); // "Read a file. " is 13 bytes, 40 times
    // Cached per array: a definition changed in place (which never happens) is not recounted.
    (tools[0] as { description: string }).description = "x";
    expect(c.tools(tools)).toBe(bound);
    expect(c.tools([...tools])).toBeLessThan(bound);
    await loadEncoder();
    (tools[0] as { description: string }).description = "Read a file. ".repeat(40);
    const exact = c.tools(tools);
    expect(exact).toBeGreaterThan(80);
    expect(exact).toBeLessThan(bound);
  });
});
