import type { AgentMessage } from "@mariozechner/pi-agent-core";
import type { Message } from "@mariozechner/pi-ai";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compactionToUser, isCompactionMessage } from "../../src/context/compaction-message.js";
import { createLlmMessages } from "../../src/context/llm-messages.js";
import { isValid, repairPairing } from "../../src/context/repair-pairing.js";
import { assistant, call, cleanHistory, messyHistory, result, user } from "./history-arbitrary.js";

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
