import { describe, expect, it } from "vitest";
import { describeCompaction } from "../../src/context/describe-compaction.js";
import type { CompactionMessage, CompactionOutcome } from "../../src/context/types.js";
import type { CompactionInfo } from "../../src/types.js";

const done = (info: Partial<CompactionInfo>): CompactionOutcome => ({
  compacted: true,
  info: {
    method: "summary",
    reason: "manual",
    removedMessages: 12,
    tokensBefore: 8400,
    tokensAfter: 600,
    at: 0,
    ...info,
  },
  message: {} as CompactionMessage,
});

describe("describeCompaction", () => {
  it("says what was summarised and how much room it made", () => {
    expect(describeCompaction(done({}))).toBe(
      "Summarised 12 older messages (~8,400 → ~600 tokens).",
    );
  });

  it("says a summary saved little when little was summarised, one message in the singular", () => {
    expect(
      describeCompaction(done({ removedMessages: 1, tokensBefore: 900, tokensAfter: 880 })),
    ).toBe(
      "Summarised 1 older message, which saved little room (~900 → ~880 tokens): the conversation was short enough as it was.",
    );
    // A summary longer than what it replaced is no shrink either.
    expect(
      describeCompaction(done({ removedMessages: 2, tokensBefore: 500, tokensAfter: 620 })),
    ).toMatch(/^Summarised 2 older messages, which saved no room/);
  });

  it("says there is nothing to compact yet, not that something failed, for a short conversation", () => {
    expect(
      describeCompaction({
        compacted: false,
        reason: "the conversation fits, and its recent messages are kept word for word",
      }),
    ).toBe(
      "Nothing to compact yet: the conversation fits, and its recent messages are kept word for word.",
    );
  });

  it("names a failed summary and what was dropped instead", () => {
    expect(describeCompaction(done({ method: "dropped", error: "HTTP 500" }))).toBe(
      "The summary request failed (HTTP 500); dropped the 12 older messages instead (~8,400 → ~600 tokens).",
    );
  });
});
