import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createPathPolicy } from "../../src/sandbox/path-policy.js";
import { createReadTool } from "../../src/tools/read-tool.js";
import { createWriteTool } from "../../src/tools/write-tool.js";
import { resultText, toolFixture } from "../tools/tool-fixture.js";

describe("path policy", () => {
  let fx = toolFixture();
  afterEach(() => {
    fx.cleanup();
    fx = toolFixture();
  });

  const confined = () => {
    const outside = join(fx.root, "outside");
    mkdirSync(outside);
    writeFileSync(join(outside, "secret.txt"), "TOP-SECRET");
    const memory = join(fx.root, "MEMORY.md");
    const policy = createPathPolicy({
      scope: "this thread's sandbox",
      grants: [
        { path: fx.workspaceDir, access: "rw", label: "the workspace" },
        { path: memory, access: "rw" },
        { path: fx.artifacts, access: "ro" },
      ],
      denials: [{ path: join(fx.root, "settings.json"), reason: "guppy's settings" }],
    });
    return { outside, memory, ctx: { ...fx.ctx, pathPolicy: policy } };
  };

  it("reads and writes inside the grants, read-only where the grant says so", async () => {
    const { memory, ctx } = confined();
    const write = createWriteTool(ctx);
    await write.execute("1", { path: "notes.txt", content: "hi" });
    expect(readFileSync(join(fx.workspaceDir, "notes.txt"), "utf8")).toBe("hi");
    await write.execute("2", { path: memory, content: "- likes tea" });
    expect(readFileSync(memory, "utf8")).toBe("- likes tea");
    writeFileSync(join(fx.artifacts, "out.txt"), "saved");
    const read = createReadTool(ctx);
    expect(resultText(await read.execute("3", { path: join(fx.artifacts, "out.txt") }))).toContain(
      "saved",
    );
    await expect(
      write.execute("4", { path: join(fx.artifacts, "out.txt"), content: "x" }),
    ).rejects.toThrow(/read-only/);
    expect(readFileSync(join(fx.artifacts, "out.txt"), "utf8")).toBe("saved");
  });

  it("refuses a path outside, naming it and what is allowed", async () => {
    const { outside, ctx } = confined();
    const read = createReadTool(ctx);
    const error = await read.execute("1", { path: join(outside, "secret.txt") }).catch((e) => e);
    expect(String(error)).toContain(join(outside, "secret.txt"));
    expect(String(error)).toContain("the workspace");
    expect(String(error)).not.toContain("TOP-SECRET");
    // A sibling whose name starts with an allowed one's is not inside it.
    mkdirSync(`${fx.workspaceDir}2`);
    writeFileSync(`${fx.workspaceDir}2/x`, "x");
    await expect(read.execute("2", { path: `${fx.workspaceDir}2/x` })).rejects.toThrow(/outside/);
  });

  it("judges the real path: a link in the workspace to outside is refused, dangling too", async () => {
    const { outside, ctx } = confined();
    symlinkSync(join(outside, "secret.txt"), join(fx.workspaceDir, "link.txt"));
    symlinkSync(outside, join(fx.workspaceDir, "dir"));
    symlinkSync(join(outside, "new.txt"), join(fx.workspaceDir, "dangling.txt"));
    const read = createReadTool(ctx);
    await expect(read.execute("1", { path: "link.txt" })).rejects.toThrow(/really/);
    await expect(read.execute("2", { path: "dir/secret.txt" })).rejects.toThrow(/outside/);
    const write = createWriteTool(ctx);
    await expect(write.execute("3", { path: "dangling.txt", content: "x" })).rejects.toThrow(
      /outside/,
    );
    await expect(write.execute("4", { path: "dir/made.txt", content: "x" })).rejects.toThrow(
      /outside/,
    );
    expect(existsSync(join(outside, "new.txt"))).toBe(false);
    expect(existsSync(join(outside, "made.txt"))).toBe(false);
  });

  it("denials win over grants and apply with no grants at all", async () => {
    writeFileSync(join(fx.root, "settings.json"), '{"apiKey":"sk-123"}');
    const open = createPathPolicy({
      scope: "the tools",
      denials: [{ path: join(fx.root, "settings.json"), reason: "guppy's settings" }],
    });
    const read = createReadTool({ ...fx.ctx, pathPolicy: open });
    await expect(read.execute("1", { path: join(fx.root, "settings.json") })).rejects.toThrow(
      /guppy's settings/,
    );
    writeFileSync(join(fx.root, "other.txt"), "fine");
    expect(resultText(await read.execute("2", { path: join(fx.root, "other.txt") }))).toContain(
      "fine",
    );
  });
});
