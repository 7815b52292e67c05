import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createOutputCapture } from "../../src/sandbox/exec.js";

describe("output capture", () => {
  const dir = mkdtempSync(join(tmpdir(), "guppy-capture-"));
  afterEach(() => rmSync(join(dir, "out.txt"), { force: true }));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("keeps an output that fits in memory whole, with no file", () => {
    let asked = false;
    const capture = createOutputCapture({
      memoryBytes: 16,
      maxFileBytes: 100,
      spillTo: () => {
        asked = true;
        return join(dir, "out.txt");
      },
    });
    capture.push(Buffer.from("0123456789"));
    capture.push(Buffer.from("abcdef"));
    expect(capture.finish()).toEqual({ text: "0123456789abcdef" });
    expect(asked).toBe(false);
  });

  it("never cuts a UTF-8 character in its head or tail", () => {
    const capture = createOutputCapture({ memoryBytes: 8, maxFileBytes: 100 });
    // "é" is two bytes: the fourth and fifth, and the fifth and fourth from the end; the
    // head and the tail are 4 bytes each.
    capture.push(Buffer.from("abcé----éxyz"));
    const { text, overflow } = capture.finish();
    expect(text).toBe("abc");
    expect(overflow?.tail).toBe("xyz");
    expect(overflow?.totalBytes).toBe(14);
    expect(overflow?.omittedBytes).toBe(14 - 3 - 3);
    expect(overflow?.lines).toBe(1);
    expect(overflow?.file).toBeUndefined();
  });

  it("cuts a file past its cap to head and tail, or saves it whole when the tail reaches back", () => {
    const path = join(dir, "out.txt");
    const capture = createOutputCapture({ memoryBytes: 8, maxFileBytes: 10, spillTo: () => path });
    const text = "line1\nline2\nline3\n"; // 18 bytes: 10 in the file, the last 4 in memory
    for (const char of text) capture.push(Buffer.from(char));
    const { overflow } = capture.finish();
    expect(overflow?.file).toEqual({ path, cut: { headBytes: 10, tailBytes: 4 } });
    expect(readFileSync(path, "utf8")).toBe(
      "line1\nline\n[... 4 bytes of output were not saved here ...]\nne3\n",
    );
    expect(overflow?.lines).toBe(3);

    const whole = createOutputCapture({ memoryBytes: 8, maxFileBytes: 12, spillTo: () => path });
    whole.push(Buffer.from("0123456789ab"));
    whole.push(Buffer.from("cdef"));
    const done = whole.finish();
    expect(done.overflow?.file).toEqual({ path });
    expect(readFileSync(path, "utf8")).toBe("0123456789abcdef");
    expect(done.overflow?.lines).toBe(1);
  });
});
