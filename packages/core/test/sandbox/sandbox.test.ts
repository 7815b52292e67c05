import { describe, expect, it } from "vitest";
import { createPathMapper, createSandbox } from "../../src/sandbox/sandbox.js";

describe("createSandbox", () => {
  it("builds the host sandbox: host paths as they are", async () => {
    const sandbox = createSandbox({ type: "host" });
    expect(sandbox.kind).toBe("host");
    expect(sandbox.toAgentPath("/tmp/x")).toBe("/tmp/x");
    const result = await sandbox.exec("echo hi", { cwd: "/", timeoutMs: 10_000 });
    expect(result.output).toBe("hi\n");
  });
});

describe("createPathMapper", () => {
  it("maps the longest matching prefix and leaves other paths alone", () => {
    const map = createPathMapper([
      { host: "/home/u/.guppy", agent: "/data" },
      { host: "/home/u/.guppy/cli/local/default/scratch", agent: "/workspace" },
    ]);
    expect(map("/home/u/.guppy/cli/local/default/scratch/a.txt")).toBe("/workspace/a.txt");
    expect(map("/home/u/.guppy/cli/local/default/scratch")).toBe("/workspace");
    expect(map("/home/u/.guppy/MEMORY.md")).toBe("/data/MEMORY.md");
    expect(map("/home/u/.guppyx/file")).toBe("/home/u/.guppyx/file");
    expect(map("/etc/hosts")).toBe("/etc/hosts");
  });
});
