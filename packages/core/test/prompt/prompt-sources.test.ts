import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  loadPromptSourcesShared,
  markPromptSourcesStale,
  PROMPT_SOURCES_FRESH_MS,
} from "../../src/prompt/prompt-sources.js";

describe("prompt sources shared by a channel's threads", () => {
  let home: string;
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), "guppy-sources-cache-"));
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  const memory = (threadId: string, at: number) =>
    loadPromptSourcesShared({ home, threadId, now: new Date(at), timeZone: "UTC" }).memory[0]
      ?.content;

  it("reuses one read for the channel's threads, then reads an outside edit once the moment has passed", () => {
    const t0 = Date.parse("2026-11-23T10:00:00Z");
    writeFileSync(join(home, "MEMORY.md"), "likes tea");
    expect(memory("telegram:chat:1", t0)).toBe("likes tea");
    writeFileSync(join(home, "MEMORY.md"), "likes coffee");
    // Another thread of the same channel, a moment later: the shared read.
    expect(memory("telegram:chat:2", t0 + 10)).toBe("likes tea");
    // Another channel reads its own.
    expect(memory("telegram:other:1", t0 + 10)).toBe("likes coffee");
    expect(memory("telegram:chat:1", t0 + PROMPT_SOURCES_FRESH_MS)).toBe("likes coffee");
  });

  it("keeps the same sources object when a new read finds the same content, a new one when it changed", () => {
    const t0 = Date.parse("2026-11-23T10:00:00Z");
    writeFileSync(join(home, "MEMORY.md"), "likes tea");
    const read = (at: number) =>
      loadPromptSourcesShared({
        home,
        threadId: "telegram:chat:1",
        now: new Date(at),
        timeZone: "UTC",
      });
    const first = read(t0);
    const again = read(t0 + PROMPT_SOURCES_FRESH_MS);
    expect(again).toBe(first);
    markPromptSourcesStale();
    expect(read(t0 + PROMPT_SOURCES_FRESH_MS + 1)).toBe(first);
    writeFileSync(join(home, "MEMORY.md"), "likes coffee");
    const changed = read(t0 + 2 * PROMPT_SOURCES_FRESH_MS + 1);
    expect(changed).not.toBe(first);
    expect(changed.memory[0]?.content).toBe("likes coffee");
  });

  it("reads the disk again right after a tool ran, and when the day changes", () => {
    const t0 = Date.parse("2026-11-23T23:59:59.900Z");
    expect(memory("cli:local:a", t0)).toBeUndefined();
    writeFileSync(join(home, "MEMORY.md"), "written by a tool");
    expect(memory("cli:local:a", t0 + 1)).toBeUndefined();
    markPromptSourcesStale();
    expect(memory("cli:local:a", t0 + 2)).toBe("written by a tool");

    writeFileSync(join(home, "MEMORY.md"), "next day");
    const sources = loadPromptSourcesShared({
      home,
      threadId: "cli:local:a",
      now: new Date(t0 + 150),
      timeZone: "UTC",
    });
    expect(sources.dailyNotes[0]?.date).toBe("2026-11-24");
    expect(sources.memory[0]?.content).toBe("next day");
  });
});
