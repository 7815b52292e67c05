import type { Tool } from "@mariozechner/pi-ai";
import { Type } from "typebox";
import { describe, expect, it, vi } from "vitest";
import { createTokenCounter, loadEncoder } from "../../src/context/token-counter.js";

// Its own file: the BPE tables are loaded once per module instance, and this test starts without.
describe("tool definition tokens", () => {
  it("shares counts across counters: every thread's counter reuses what another counted", () => {
    const schema = Type.Object({ command: Type.String() });
    const tools: Tool[] = [{ name: "bash", description: "Run a command.", parameters: schema }];
    const message = { role: "user" as const, content: "hello there", timestamp: 0 };
    const first = createTokenCounter();
    const bound = first.tools(tools);
    const messageBound = first.messageBound(message);
    // Changed in place (which never happens): a counter that counted afresh would see it.
    (tools[0] as { description: string }).description = "x".repeat(500);
    (message as { content: string }).content = "x".repeat(500);
    const second = createTokenCounter();
    expect(second.tools(tools)).toBe(bound);
    expect(second.messageBound(message)).toBe(messageBound);
    // A new array of the same schema object: recounted, its schema text taken from the cache.
    const stringify = vi.spyOn(JSON, "stringify");
    try {
      expect(second.tools([...tools])).toBeGreaterThan(bound);
      expect(stringify).not.toHaveBeenCalled();
    } finally {
      stringify.mockRestore();
    }
  });

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
