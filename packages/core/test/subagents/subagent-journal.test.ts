import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/logging/logger.js";
import { createSubagentJournal } from "../../src/subagents/subagent-journal.js";
import { tempHome } from "../helpers/temp-home.js";

describe("the subagent journal", () => {
  let t: ReturnType<typeof tempHome>;
  beforeEach(() => {
    t = tempHome();
  });
  afterEach(() => t.cleanup());

  it("knows which children's results are not handed over, and keeps only those when rewritten", () => {
    const path = join(t.home, "subagents.jsonl");
    const journal = createSubagentJournal(path, silentLogger);
    expect(journal.unhanded()).toEqual([]);
    const at = new Date().toISOString();
    journal.write({ t: "spawned", id: "a:b:c~sub-1", parent: "a:b:c", label: "one", at });
    journal.write({ t: "spawned", id: "a:b:c~sub-2", parent: "a:b:c", at });
    journal.write({ t: "spawned", id: "a:b:d~sub-1", parent: "a:b:d", at });
    journal.write({ t: "ended", id: "a:b:c~sub-1", state: "done", answer: "42" });
    journal.write({ t: "ended", id: "a:b:c~sub-2", state: "failed", answer: "boom" });
    journal.write({ t: "handed", ids: ["a:b:c~sub-2"] });
    const open = [
      { id: "a:b:c~sub-1", parent: "a:b:c", label: "one", ended: { state: "done", answer: "42" } },
      { id: "a:b:d~sub-1", parent: "a:b:d" },
    ];
    expect(journal.unhanded()).toEqual(open);
    journal.compact();
    expect(readFileSync(path, "utf8")).not.toContain("sub-2");
    expect(journal.unhanded()).toEqual(open);
    // Appends go on into the rewritten file.
    journal.write({ t: "handed", ids: ["a:b:c~sub-1", "a:b:d~sub-1"] });
    expect(createSubagentJournal(path, silentLogger).unhanded()).toEqual([]);
  });
});
