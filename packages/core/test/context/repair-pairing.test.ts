import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { chooseCut, cutPoints } from "../../src/context/compaction.js";
import { isValid, repairPairing } from "../../src/context/repair-pairing.js";
import { assistant, call, cleanHistory, messyHistory, result, user } from "./history-arbitrary.js";
import { type WireApi, wirePayload, wireProblems } from "./wire-check.js";

const apis: WireApi[] = ["openai-completions", "anthropic-messages"];

describe("pairing repair", () => {
  it("fixes each kind of break: orphan, missing, duplicate, out-of-order, failed assistant", () => {
    const broken = [
      result("ghost"),
      user("hi"),
      assistant("", [call("a"), call("b")]),
      result("b"),
      result("b"),
      assistant("", [call("x")], "aborted"),
      result("x"),
      user("next"),
    ];
    const { messages, fixes } = repairPairing(broken);
    expect(messages.map((m) => (m.role === "toolResult" ? `r:${m.toolCallId}` : m.role))).toEqual([
      "user",
      "assistant",
      "r:a",
      "r:b",
      "user",
    ]);
    expect(fixes.length).toBeGreaterThanOrEqual(4);
    expect(isValid(messages)).toBe(true);
  });

  it("returns a valid history untouched (same array, no fixes)", () => {
    const ok = [user("hi"), assistant("", [call("a")]), result("a"), assistant("done")];
    const r = repairPairing(ok);
    expect(r.messages).toBe(ok);
    expect(r.fixes).toEqual([]);
  });

  it.each(apis)(
    "property: any messy history cut at any point is valid on the %s wire after repair",
    async (api) => {
      await fc.assert(
        fc.asyncProperty(messyHistory, fc.nat(), async (history, at) => {
          const cut = history.slice(at % (history.length + 1));
          const repaired = repairPairing(cut).messages;
          expect(isValid(repaired)).toBe(true);
          expect(repairPairing(repaired).messages).toBe(repaired); // idempotent
          if (repaired.length === 0) return;
          expect(wireProblems(api, await wirePayload(api, repaired))).toEqual([]);
        }),
        { numRuns: 150 },
      );
    },
  );

  it("property: clean histories need no repair", () => {
    fc.assert(
      fc.property(cleanHistory, (history) => {
        expect(repairPairing(history).fixes).toEqual([]);
      }),
      { numRuns: 200 },
    );
  });
});

describe("cut points", () => {
  it("never cuts between a call and its results", () => {
    const h = [
      user("u"),
      assistant("", [call("a"), call("b")]),
      result("a"),
      result("b"),
      user("v"),
    ];
    expect(cutPoints(h)).toEqual([true, true, false, false, true, true]);
  });

  it.each(apis)(
    "property (%s): what a chosen cut keeps, after a summary, is valid without any repair",
    async (api) => {
      await fc.assert(
        fc.asyncProperty(
          cleanHistory,
          fc.array(fc.integer({ min: 1, max: 500 }), { minLength: 1, maxLength: 200 }),
          fc.integer({ min: 0, max: 5000 }),
          async (history, sizes, keep) => {
            const tokens = history.map((_, i) => sizes[i % sizes.length]!);
            const cut = chooseCut(history, tokens, keep);
            expect(cut).toBeGreaterThanOrEqual(0);
            expect(cut).toBeLessThan(Math.max(1, history.length));
            const kept = [user("[summary]"), ...history.slice(cut)];
            expect(repairPairing(kept).fixes).toEqual([]);
            expect(wireProblems(api, await wirePayload(api, kept))).toEqual([]);
          },
        ),
        { numRuns: 100 },
      );
    },
  );

  it("property: every index cutPoints marks valid keeps a valid suffix", () => {
    fc.assert(
      fc.property(cleanHistory, (history) => {
        const valid = cutPoints(history);
        valid.forEach((ok, i) => {
          if (ok) expect(repairPairing([user("[summary]"), ...history.slice(i)]).fixes).toEqual([]);
        });
      }),
      { numRuns: 200 },
    );
  });
});
