import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createEditTool } from "../../src/tools/edit-tool.js";
import { createReadTool } from "../../src/tools/read-tool.js";
import { resolveToolPath } from "../../src/tools/tool-context.js";
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
    // An empty file: no lines to page through, and said so.
    writeFileSync(join(fx.workspaceDir, "empty.txt"), "");
    expect(resultText(await read.execute("4", { path: "empty.txt" }))).toBe("(empty file)");
    await expect(read.execute("5", { path: "empty.txt", offset: 2 })).rejects.toThrow(
      `offset 2 is past the end of ${join(fx.workspaceDir, "empty.txt")} (an empty file).`,
    );
    // A file with CRLF line ends is edited with strings written with \n, and keeps its CRLFs.
    writeFileSync(join(fx.workspaceDir, "win.txt"), "one\r\ntwo\r\nthree\r\n");
    await createEditTool(fx.ctx).execute("6", {
      path: "win.txt",
      old_string: "one\ntwo",
      new_string: "one\nTWO\nand a half",
    });
    expect(readFileSync(join(fx.workspaceDir, "win.txt"), "utf8")).toBe(
      "one\r\nTWO\r\nand a half\r\nthree\r\n",
    );
    // A file where a parent directory should be is named, not reported as node's EEXIST.
    const under = join(fx.workspaceDir, "deep/er/file.txt");
    for (const path of ["deep/er/file.txt/new.txt", "deep/er/file.txt/a/b/new.txt"]) {
      await expect(write.execute("3", { path, content: "x" })).rejects.toThrow(
        `Cannot write ${join(fx.workspaceDir, path)}: ${under} is a file, not a directory.`,
      );
    }
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

  it("read, edit and write refuse a FIFO or a device at once, and follow a symlink to a file", async () => {
    // Without the check the tools open these: a FIFO waits for a writer (a reader), a device
    // gives what it gives. The loops below answer every open, so the old behaviour shows as
    // a wrong result here instead of a test process blocked for good.
    const fromFifo = join(fx.workspaceDir, "from-fifo");
    const toFifo = join(fx.workspaceDir, "to-fifo");
    execFileSync("mkfifo", [fromFifo, toFifo]);
    const loops: ChildProcess[] = [
      spawn("sh", ["-c", `while :; do echo old > '${fromFifo}'; done`], { detached: true }),
      spawn("sh", ["-c", `while :; do cat '${toFifo}' > /dev/null; done`], { detached: true }),
    ];
    try {
      const read = createReadTool(fx.ctx);
      const edit = createEditTool(fx.ctx);
      const write = createWriteTool(fx.ctx);
      const fifo =
        /is a FIFO \(named pipe\), not a regular file; (read|edit|write) works on regular files only\.$/;
      await expect(read.execute("1", { path: "from-fifo" })).rejects.toThrow(fifo);
      await expect(
        edit.execute("2", { path: "from-fifo", old_string: "old", new_string: "new" }),
      ).rejects.toThrow(fifo);
      await expect(write.execute("3", { path: "to-fifo", content: "x" })).rejects.toThrow(fifo);
      const device = /is a character device, not a regular file/;
      await expect(read.execute("4", { path: "/dev/zero" })).rejects.toThrow(device);
      await expect(
        edit.execute("5", { path: "/dev/null", old_string: "a", new_string: "b" }),
      ).rejects.toThrow(device);
      await expect(write.execute("6", { path: "/dev/null", content: "x" })).rejects.toThrow(device);
    } finally {
      for (const loop of loops) if (loop.pid) process.kill(-loop.pid, "SIGKILL");
    }

    const target = join(fx.workspaceDir, "target.txt");
    writeFileSync(target, "one\n");
    symlinkSync(target, join(fx.workspaceDir, "link.txt"));
    const read = createReadTool(fx.ctx);
    expect(resultText(await read.execute("7", { path: "link.txt" }))).toBe("1\tone\n");
    await createEditTool(fx.ctx).execute("8", {
      path: "link.txt",
      old_string: "one",
      new_string: "two",
    });
    expect(readFileSync(target, "utf8")).toBe("two\n");
    await createWriteTool(fx.ctx).execute("9", { path: "link.txt", content: "three\n" });
    expect(readFileSync(target, "utf8")).toBe("three\n");
  });

  it("edit refuses binary and non-UTF-8 files and leaves their bytes alone", async () => {
    const edit = createEditTool(fx.ctx);
    const binary = Buffer.concat([Buffer.from([0x89, 0x50, 0x00, 0x01]), Buffer.from(" hello ")]);
    writeFileSync(join(fx.workspaceDir, "b.bin"), binary);
    await expect(
      edit.execute("1", { path: "b.bin", old_string: "hello", new_string: "bye" }),
    ).rejects.toThrow(/b\.bin is a binary file \(11 bytes\); edit changes text files only\.$/);
    expect(readFileSync(join(fx.workspaceDir, "b.bin")).equals(binary)).toBe(true);

    // Latin-1 text and a JPEG header: no NUL, but not UTF-8 either.
    const prefix = Buffer.from("héllo ", "utf8");
    const latin1 = Buffer.concat([
      prefix,
      Buffer.from([0xff, 0xd8, 0x20, 0xe9]),
      Buffer.from(" hello"),
    ]);
    writeFileSync(join(fx.workspaceDir, "l.txt"), latin1);
    await expect(
      edit.execute("2", { path: "l.txt", old_string: "hello", new_string: "bye" }),
    ).rejects.toThrow(`is not UTF-8 text (invalid byte at offset ${prefix.length})`);
    expect(readFileSync(join(fx.workspaceDir, "l.txt")).equals(latin1)).toBe(true);

    // Valid UTF-8 — a BOM, accents, an emoji, even a real U+FFFD — is edited byte-exactly.
    const before = "\ufeffcafé 🐟 \ufffd hello\r\n";
    writeFileSync(join(fx.workspaceDir, "u.txt"), before, "utf8");
    await edit.execute("3", { path: "u.txt", old_string: "hello", new_string: "bye" });
    expect(
      readFileSync(join(fx.workspaceDir, "u.txt")).equals(
        Buffer.from(before.replace("hello", "bye"), "utf8"),
      ),
    ).toBe(true);
  });
});
