import { closeSync, ftruncateSync, openSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { createReadTool } from "../../src/tools/read-tool.js";
import { resultText, toolFixture } from "./tool-fixture.js";

/** What read answered before it read in chunks: the whole file decoded, split and paged. */
function wholeFileRead(
  bytes: Buffer,
  path: string,
  offset: number | undefined,
  limit: number | undefined,
  maxChars: number,
): string {
  const lines = bytes.toString("utf8").split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  const total = lines.length;
  const start = (offset ?? 1) - 1;
  if (bytes.length === 0 && start > 0) {
    return `offset ${offset} is past the end of ${path} (an empty file).`;
  }
  if (start >= total && total > 0)
    return `offset ${offset} is past the end of ${path} (${total === 1 ? "1 line" : `${total} lines`}).`;
  const end = Math.min(total, start + (limit ?? 2000));
  const width = String(end).length;
  let out = "";
  let shownEnd = start;
  for (let i = start; i < end; i++) {
    let line = lines[i] ?? "";
    if (line.length > 2000) line = `${line.slice(0, 2000)} [line cut at 2000 chars]`;
    const row = `${String(i + 1).padStart(width)}\t${line}\n`;
    if (out.length + row.length > maxChars && i > start) break;
    out += row;
    shownEnd = i + 1;
  }
  if (total === 0 || (total === 1 && lines[0] === "")) return "(empty file)";
  if (shownEnd < total || start > 0) {
    out += `\n[Lines ${start + 1}-${shownEnd} of ${total}.${
      shownEnd < total ? ` Continue with offset=${shownEnd + 1}.` : ""
    }]`;
  }
  return out;
}

// Pieces of lines: multi-byte characters, invalid and cut-off sequences, CR, and runs around
// the 2000-character line cut (a 4-byte character there leaves half a surrogate pair).
const piece = fc.oneof(
  { arbitrary: fc.constantFrom("a", "word ", "é", "中", "🐟", "\r", "\ufeff", "\t"), weight: 6 },
  {
    arbitrary: fc.constantFrom(Buffer.from([0xff]), Buffer.from([0xe2, 0x82]), Buffer.from([0xc3])),
    weight: 2,
  },
  {
    arbitrary: fc
      .tuple(fc.constantFrom("x", "é", "中", "🐟"), fc.integer({ min: 990, max: 2900 }))
      .map(([c, n]) => c.repeat(n)),
    weight: 1,
  },
);
const line = fc
  .array(piece, { maxLength: 6 })
  .map((parts) =>
    Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p, "utf8") : p))),
  );
const file = fc
  .tuple(fc.array(line, { maxLength: 30 }), fc.constantFrom("", "\n", "\n\n"))
  .map(([lines, tail]) =>
    Buffer.concat([
      ...lines.flatMap((l, i) => (i === 0 ? [l] : [Buffer.from("\n"), l])),
      Buffer.from(tail),
    ]),
  );

describe("read pages without reading the whole file", () => {
  let fx = toolFixture();
  afterEach(() => {
    fx.cleanup();
    fx = toolFixture();
  });

  it("answers as reading the whole file did, whatever the chunk borders", async () => {
    const path = join(fx.workspaceDir, "f.txt");
    await fc.assert(
      fc.asyncProperty(
        file,
        fc.option(fc.integer({ min: 1, max: 35 }), { nil: undefined }),
        fc.option(fc.integer({ min: 1, max: 35 }), { nil: undefined }),
        fc.integer({ min: 200, max: 12_000 }),
        // Chunks from one byte to the whole file, at most ~400 reads a file (to keep it quick).
        fc.integer({ min: 1, max: 400 }),
        async (bytes, offset, limit, maxChars, reads) => {
          writeFileSync(path, bytes);
          const chunkBytes = Math.max(1, Math.ceil(bytes.length / reads));
          const read = createReadTool(
            { ...fx.ctx, toolResultMaxChars: maxChars },
            { chunkBytes, countBytes: Number.POSITIVE_INFINITY },
          );
          const expected = wholeFileRead(bytes, path, offset, limit, maxChars);
          const answer = await read.execute("1", { path: "f.txt", offset, limit }).then(
            (r) => resultText(r),
            (error: Error) => error.message,
          );
          expect(answer).toBe(expected);
        },
      ),
      { numRuns: 150 },
    );
  });

  it("stops counting lines after countBytes and says the total is not known", async () => {
    const path = join(fx.workspaceDir, "n.txt");
    const lines = Array.from({ length: 20_000 }, (_, i) => `line${i + 1}`);
    writeFileSync(path, `${lines.join("\n")}\n`);
    const read = createReadTool(fx.ctx, { chunkBytes: 1024, countBytes: 4096 });
    const text = resultText(await read.execute("1", { path: "n.txt", offset: 10, limit: 3 }));
    expect(text).toMatch(/^10\tline10\n11\tline11\n12\tline12\n\n\[Lines 10-12 of at least (\d+);/);
    const known = Number(/of at least (\d+)/.exec(text)?.[1]);
    expect(known).toBeGreaterThan(12);
    expect(known).toBeLessThan(lines.length);
    expect(text).toContain("Continue with offset=13.]");
    // A page at the end has read the whole file to get there, so it knows the total.
    const last = resultText(await read.execute("2", { path: "n.txt", offset: 19_999 }));
    expect(last).toBe("19999\tline19999\n20000\tline20000\n\n[Lines 19999-20000 of 20000.]");
  });

  it("pages a file longer than the longest string V8 can make", async () => {
    // Text, then a sparse stretch (NULs that take no disk) past 0x1fffffe8 characters: reading
    // it whole fails with "Cannot create a string longer than ...".
    const path = join(fx.workspaceDir, "huge.txt");
    const head = Array.from({ length: 1000 }, (_, i) => `line ${i + 1} of the head`).join("\n");
    const fd = openSync(path, "w");
    try {
      writeSync(fd, `${head}\n`);
      ftruncateSync(fd, 600_000_000);
    } finally {
      closeSync(fd);
    }
    const read = createReadTool(fx.ctx);
    const text = resultText(await read.execute("1", { path: "huge.txt", limit: 3 }));
    expect(text).toMatch(
      /^1\tline 1 of the head\n2\tline 2 of the head\n3\tline 3 of the head\n\n\[Lines 1-3 of at least \d+; this 600000000-byte file was not read to its end to count them\. Continue with offset=4\.\]$/,
    );
  });
});
