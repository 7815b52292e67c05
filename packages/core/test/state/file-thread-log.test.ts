import { appendFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createFileThreadLog } from "../../src/state/file-thread-log.js";
import { readLinesBackward, readLinesForward } from "../../src/state/read-lines.js";
import { createStore } from "../../src/store/create-store.js";
import { LOG_FILE, threadDirOf } from "../../src/store/thread-layout.js";
import { tempHome } from "../helpers/temp-home.js";
import { describeThreadLogContract } from "./thread-log-contract.js";

// The file backend's thread log: the contract, written by today's store and read by the reader.
describeThreadLogContract("files", () => {
  const h = tempHome();
  const store = createStore({ home: h.home });
  return {
    reader: createFileThreadLog(h.home),
    writer: {
      appendLog: store.appendLog,
      loadContext: store.loadContext,
      appendContext: store.appendContext,
      replaceContext: store.saveContext,
      archiveContext: store.archiveContext,
      whenSaved: store.whenSaved,
    },
    async tearLog(threadId, partial) {
      const dir = threadDirOf(h.home, threadId);
      mkdirSync(dir, { recursive: true });
      appendFileSync(join(dir, LOG_FILE), partial);
      // The writer that tore it died: the next one looks at the file's end afresh.
      store.closeFiles(threadId);
    },
    cleanup: h.cleanup,
  };
});

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
