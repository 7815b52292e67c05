import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createEditTool } from "../../src/tools/edit-tool.js";
import { createReadTool } from "../../src/tools/read-tool.js";
import { resolveToolPath } from "../../src/tools/resolve-path.js";
import { createWriteTool } from "../../src/tools/write-tool.js";
import { resultText, toolFixture } from "./tool-fixture.js";

describe("path handling", () => {
  it("resolves relative paths against the workspace, keeps absolute ones, expands ~", () => {
    expect(resolveToolPath("/ws", "a/b.txt")).toBe("/ws/a/b.txt");
    expect(resolveToolPath("/ws", "../up.txt")).toBe("/up.txt");
    expect(resolveToolPath("/ws", "/etc/hosts")).toBe("/etc/hosts");
    expect(resolveToolPath("/ws", "~/notes.md")).toBe(join(homedir(), "notes.md"));
  });
});

describe("read / write / edit", () => {
  let fx = toolFixture();
  afterEach(() => {
    fx.cleanup();
    fx = toolFixture();
  });

  it("write creates parent directories; read shows numbered lines", async () => {
    const write = createWriteTool(fx.ctx);
    const read = createReadTool(fx.ctx);
    await write.execute("1", { path: "deep/er/file.txt", content: "alpha\nbeta\ngamma\n" });
    expect(readFileSync(join(fx.workspaceDir, "deep/er/file.txt"), "utf8")).toBe(
      "alpha\nbeta\ngamma\n",
    );
    const text = resultText(await read.execute("2", { path: "deep/er/file.txt" }));
    expect(text).toBe("1\talpha\n2\tbeta\n3\tgamma\n");
  });

  it("read pages with offset and limit and says how to continue", async () => {
    writeFileSync(
      join(fx.workspaceDir, "n.txt"),
      Array.from({ length: 50 }, (_, i) => `line${i + 1}`).join("\n"),
    );
    const read = createReadTool(fx.ctx);
    const text = resultText(await read.execute("1", { path: "n.txt", offset: 10, limit: 3 }));
    expect(text).toContain("10\tline10\n11\tline11\n12\tline12\n");
    expect(text).not.toContain("line13");
    expect(text).toContain("[Lines 10-12 of 50. Continue with offset=13.]");
  });

  it("read refuses binary files and missing files with a clear message", async () => {
    writeFileSync(join(fx.workspaceDir, "b.bin"), Buffer.from([0x89, 0x50, 0x00, 0x01, 0x02]));
    const read = createReadTool(fx.ctx);
    await expect(read.execute("1", { path: "b.bin" })).rejects.toThrow(
      /is a binary file \(5 bytes\)/,
    );
    await expect(read.execute("2", { path: "nope.txt" })).rejects.toThrow(
      /File not found: nope.txt/,
    );
    mkdirSync(join(fx.workspaceDir, "dir"));
    await expect(read.execute("3", { path: "dir" })).rejects.toThrow(/is a directory/);
  });

  it("edit replaces a unique exact match", async () => {
    const path = join(fx.workspaceDir, "e.txt");
    writeFileSync(path, "one two three");
    const edit = createEditTool(fx.ctx);
    const r = await edit.execute("1", { path: "e.txt", old_string: "two", new_string: "2" });
    expect(readFileSync(path, "utf8")).toBe("one 2 three");
    expect(resultText(r)).toContain("Replaced 1 occurrence");
  });

  it("edit refuses an ambiguous match unless replace_all, and a missing one", async () => {
    const path = join(fx.workspaceDir, "e.txt");
    writeFileSync(path, "a-b-a-b-a");
    const edit = createEditTool(fx.ctx);
    await expect(
      edit.execute("1", { path: "e.txt", old_string: "a", new_string: "x" }),
    ).rejects.toThrow(/occurs 3 times .* replace_all/);
    expect(readFileSync(path, "utf8")).toBe("a-b-a-b-a");
    await expect(
      edit.execute("2", { path: "e.txt", old_string: "zzz", new_string: "x" }),
    ).rejects.toThrow(/was not found/);
    await edit.execute("3", {
      path: "e.txt",
      old_string: "a",
      new_string: "$&x",
      replace_all: true,
    });
    expect(readFileSync(path, "utf8")).toBe("$&x-b-$&x-b-$&x");
    await expect(
      edit.execute("4", { path: "missing.txt", old_string: "a", new_string: "b" }),
    ).rejects.toThrow(/File not found/);
    expect(existsSync(join(fx.workspaceDir, "missing.txt"))).toBe(false);
  });

  it("edit on a directory says it is a directory, not that it is missing", async () => {
    mkdirSync(join(fx.workspaceDir, "dir"));
    const edit = createEditTool(fx.ctx);
    const refused = edit.execute("1", { path: "dir", old_string: "a", new_string: "b" });
    await expect(refused).rejects.toThrow(`${join(fx.workspaceDir, "dir")} is a directory`);
    await expect(refused).rejects.not.toThrow(/not found/);
  });
});
