import { describe, expect, it } from "vitest";
import { mcpToolName, sanitiseToolName } from "../../src/mcp/mcp-tool-names.js";

describe("MCP tool names", () => {
  it("are <server>__<tool>, with characters providers refuse replaced", () => {
    expect(mcpToolName("everything", "echo", new Set())).toBe("everything__echo");
    expect(mcpToolName("my files", "read.file/v2", new Set())).toBe("my_files__read_file_v2");
    expect(sanitiseToolName("a-b_c9Z")).toBe("a-b_c9Z");
  });

  it("are cut to 64 characters", () => {
    const name = mcpToolName("server", "t".repeat(100), new Set());
    expect(name).toHaveLength(64);
    expect(name.startsWith("server__ttt")).toBe(true);
  });

  it("are unique: a second tool that sanitises or cuts to the same name gets a suffix", () => {
    const taken = new Set<string>();
    expect(mcpToolName("s", "a.b", taken)).toBe("s__a_b");
    expect(mcpToolName("s", "a/b", taken)).toBe("s__a_b_2");
    expect(mcpToolName("s", "a b", taken)).toBe("s__a_b_3");
    const long = "x".repeat(80);
    const first = mcpToolName("s", `${long}1`, taken);
    const second = mcpToolName("s", `${long}2`, taken);
    expect(first).toHaveLength(64);
    expect(second).toHaveLength(64);
    expect(second).not.toBe(first);
    expect(second.endsWith("_2")).toBe(true);
  });
});
