import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createFileThreadLog } from "../../src/state/file-thread-log.js";
import { readLinesBackward, readLinesForward } from "../../src/state/read-lines.js";
import { tempHome } from "../helpers/temp-home.js";

describe("the file backend's line readers", () => {
  it("give a file's lines last first and first first, whatever the chunk size cuts", async () => {
    const h = tempHome();
    try {
      const lines = ["a", "ünï", "", "cödé line three", "x".repeat(50), "last"];
      const path = h.write("f.jsonl", `${lines.join("\n")}\n`);
      const expected = lines.filter((l) => l !== "");
      for (const chunkSize of [1, 2, 3, 7, 64]) {
        const back: string[] = [];
        for await (const line of readLinesBackward(path, { chunkSize })) back.push(line.text);
        expect(back).toEqual([...expected].reverse());
        const forth: string[] = [];
        for await (const line of readLinesForward(path, 0, chunkSize)) forth.push(line.text);
        expect(forth).toEqual(expected);
      }
      const missing: string[] = [];
      for await (const line of readLinesBackward(join(h.home, "nope"))) missing.push(line.text);
      for await (const line of readLinesForward(join(h.home, "nope"), 0)) missing.push(line.text);
      expect(missing).toEqual([]);
    } finally {
      h.cleanup();
    }
  });

  it("refuses a cursor it did not give", async () => {
    const h = tempHome();
    try {
      const reader = createFileThreadLog(h.home);
      await expect(
        reader.readForward("http:api:t", { limit: 1, after: "12" as never }),
      ).rejects.toThrow(/not a cursor/);
      await expect(reader.readBackward("http:api:t", { limit: 0 })).rejects.toThrow(RangeError);
    } finally {
      h.cleanup();
    }
  });
});
