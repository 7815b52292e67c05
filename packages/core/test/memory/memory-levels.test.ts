import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readMemoryLevels } from "../../src/memory/memory-levels.js";
import { tempHome } from "../helpers/temp-home.js";

describe("readMemoryLevels", () => {
  let t: ReturnType<typeof tempHome>;
  beforeEach(() => {
    t = tempHome();
  });
  afterEach(() => t.cleanup());

  it("finds the global, transport and channel MEMORY.md of a thread, broadest first", () => {
    t.write("MEMORY.md", "global fact");
    t.write("telegram/MEMORY.md", "telegram fact");
    t.write("telegram/-100123/MEMORY.md", "channel fact");
    t.write("telegram/-100999/MEMORY.md", "another channel's fact");
    t.write("slack/MEMORY.md", "slack fact");
    const levels = readMemoryLevels(t.home, "telegram:-100123:42");
    expect(levels.map((l) => [l.scope, l.title, l.path, l.content])).toEqual([
      ["global", "Global Memory", join(t.home, "MEMORY.md"), "global fact"],
      [
        "transport",
        "Transport Memory (telegram)",
        join(t.home, "telegram/MEMORY.md"),
        "telegram fact",
      ],
      [
        "channel",
        "Channel Memory (telegram:-100123)",
        join(t.home, "telegram/-100123/MEMORY.md"),
        "channel fact",
      ],
    ]);
  });

  it("encodes the channel id like the store does (no escaping the data directory)", () => {
    t.write("gchat/spaces%2FABC/MEMORY.md", "space fact");
    const [, , channel] = readMemoryLevels(t.home, "gchat:spaces/ABC:t1");
    expect(channel?.path).toBe(join(t.home, "gchat", "spaces%2FABC", "MEMORY.md"));
    expect(channel?.content).toBe("space fact");
  });

  it("leaves content undefined for missing, empty, blank and comment-only files", () => {
    t.write("MEMORY.md", "");
    t.write("cli/MEMORY.md", "  \n\n");
    t.write("cli/local/MEMORY.md", "<!-- write channel memory here -->\n");
    const levels = readMemoryLevels(t.home, "cli:local:default");
    expect(levels.map((l) => l.content)).toEqual([undefined, undefined, undefined]);
    expect(readMemoryLevels(t.home, "other:x:y").every((l) => l.content === undefined)).toBe(true);
  });

  it("reads the files fresh on every call", () => {
    expect(readMemoryLevels(t.home, "cli:local:default")[0]?.content).toBeUndefined();
    t.write("MEMORY.md", "likes tea");
    expect(readMemoryLevels(t.home, "cli:local:default")[0]?.content).toBe("likes tea");
    t.write("MEMORY.md", "likes coffee now\r\n");
    expect(readMemoryLevels(t.home, "cli:local:default")[0]?.content).toBe("likes coffee now");
  });
});
