import type { AgentMessage } from "@mariozechner/pi-agent-core";
import type { Message } from "@mariozechner/pi-ai";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { chooseCut, cutPoints } from "../../src/context/compaction.js";
import { compactionToUser, isCompactionMessage } from "../../src/context/compaction-message.js";
import { createLlmMessages, isValid, repairPairing } from "../../src/context/llm-messages.js";
import { assistant, call, cleanHistory, messyHistory, result, user } from "./history-arbitrary.js";
import { type WireApi, wirePayload, wireProblems } from "./wire-check.js";

/** What a conversion from scratch gives: the reference the incremental one must equal. */
function fresh(messages: readonly AgentMessage[]): Message[] {
  const llm: Message[] = [];
  for (const m of messages) llm.push(isCompactionMessage(m) ? compactionToUser(m) : (m as Message));
  return repairPairing(llm).messages;
}

describe("incremental pairing check", () => {
  it("property: checking only what follows a valid prefix gives the full check's answer", () => {
    fc.assert(
      fc.property(cleanHistory, messyHistory, fc.nat(), (prefix, tail, at) => {
        const valid = repairPairing(prefix.slice(at % (prefix.length + 1))).messages;
        const all = [...valid, ...tail];
        expect(isValid(all, valid.length)).toBe(isValid(all));
        expect(repairPairing(all, valid.length).messages).toEqual(repairPairing(all).messages);
      }),
      { numRuns: 300 },
    );
  });
});

describe("createLlmMessages", () => {
  it("property: over any sequence of appends and rewrites, each request equals a fresh conversion", () => {
    const step = fc.oneof(
      fc.record({ kind: fc.constant("append" as const), messages: messyHistory }),
      fc.record({
        kind: fc.constant("rewrite" as const),
        keepFrom: fc.nat(),
        messages: messyHistory,
      }),
    );
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 8 }), (steps) => {
        let fixed = 0;
        const convert = createLlmMessages(() => fixed++);
        let state: AgentMessage[] = [];
        for (const s of steps) {
          // The agent hands over a new array each request; appends keep the same objects.
          if (s.kind === "append") state = [...state, ...s.messages];
          else
            state = [
              user("summary"),
              ...state.slice(s.keepFrom % (state.length + 1)),
              ...s.messages,
            ];
          const out = convert(state);
          expect(out).toEqual(fresh(state));
          expect(isValid(out)).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("does not take a request whose results it reordered as the valid prefix of the next", () => {
    const fixes: string[][] = [];
    const convert = createLlmMessages((f) => fixes.push(f));
    const first: AgentMessage[] = [
      user("go"),
      assistant("", [call("c0"), call("c1")]),
      result("c1"),
      result("c0"),
    ];
    const ids = (ms: Message[]) => ms.map((m) => (m.role === "toolResult" ? m.toolCallId : m.role));
    expect(ids(convert(first))).toEqual(["user", "assistant", "c0", "c1"]);
    expect(fixes).toEqual([["put the results of c0, c1 in call order"]]);
    expect(ids(convert([...first, user("next")]))).toEqual([
      "user",
      "assistant",
      "c0",
      "c1",
      "user",
    ]);
  });

  it("converts only the new messages when the request extends the previous one", () => {
    let fixes = 0;
    const convert = createLlmMessages(() => fixes++);
    const a: AgentMessage[] = [user("one"), user("two")];
    const first = convert(a);
    const b = [...a, user("three")];
    const second = convert(b);
    expect(second).toEqual([...first, b[2]]);
    expect(second[0]).toBe(first[0]);
    expect(fixes).toBe(0);
  });
});

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
