import { describe, expect, it } from "vitest";
import {
  createPromptAssembler,
  PASTE_END,
  PASTE_START,
} from "../../src/terminal/prompt-assembler.js";

/** An assembler whose "end of this turn" is `turn()`, and the prompts it sent. */
function assemble() {
  const sent: string[] = [];
  let pending: (() => void)[] = [];
  const assembler = createPromptAssembler({
    emit: (text) => sent.push(text),
    defer: (fn) => pending.push(fn),
  });
  const turn = () => {
    const run = pending;
    pending = [];
    for (const fn of run) fn();
  };
  /** Feeds `chunk` as readline would (one line per line break) and ends the turn. */
  const chunk = (text: string) => {
    const lines = text.split("\n");
    if (lines.at(-1) === "") lines.pop();
    for (const line of lines) assembler.line(line);
    turn();
  };
  return { assembler, sent, turn, chunk };
}

const code = "please review this:\ndef f(x):\n    return x";

describe("the prompt assembler", () => {
  it("takes lines of one chunk as one prompt, indentation kept", () => {
    const { sent, chunk } = assemble();
    chunk(`${code}\n`);
    expect(sent).toEqual([code]);
  });

  it("keeps lines typed in separate turns apart", () => {
    const { sent, chunk } = assemble();
    chunk("first\n");
    chunk("  second\n");
    expect(sent).toEqual(["first", "  second"]);
  });

  it("sends a command line of a chunk alone, after the lines before it", () => {
    const { sent, chunk } = assemble();
    chunk("hi\n/exit\n");
    chunk("hello there\n/status\n/new\n/status\n/exit\n");
    expect(sent).toEqual(["hi", "/exit", "hello there", "/status", "/new", "/status", "/exit"]);
  });

  it("keeps lines that only look like commands (a comment, a path) in the prompt", () => {
    const { sent, chunk } = assemble();
    chunk("what is wrong:\n// the loop\n/etc/hosts: missing\n");
    expect(sent).toEqual(["what is wrong:\n// the loop\n/etc/hosts: missing"]);
  });

  it("drops blank lines around a prompt and trailing whitespace, nothing else", () => {
    const { sent, chunk } = assemble();
    chunk("\n  \n  a\n\n    b  \n\n");
    expect(sent).toEqual(["  a\n\n    b"]);
  });

  it("takes a bracketed paste as one prompt, however it arrives, commands included", () => {
    const { assembler, sent, turn } = assemble();
    assembler.pasteStart();
    assembler.line("please review this:");
    turn();
    assembler.line("/exit");
    turn();
    assembler.line("    return x");
    assembler.pasteEnd(true);
    expect(sent).toEqual(["please review this:\n/exit\n    return x"]);
  });

  it("holds a paste whose last line is still being edited until Enter sends it", () => {
    const { assembler, sent, turn } = assemble();
    assembler.pasteStart();
    assembler.line("a");
    assembler.pasteEnd(false);
    turn();
    expect(sent).toEqual([]);
    expect(assembler.holding).toBe(true);
    assembler.line("  b and more typed");
    expect(sent).toEqual(["a\n  b and more typed"]);
    expect(assembler.holding).toBe(false);
  });

  it("reads paste markers left in the line text (input that is not a terminal)", () => {
    const { sent, chunk } = assemble();
    chunk(`before\n${PASTE_START}${code}\n${PASTE_END}\n/exit\n`);
    chunk(`typed ${PASTE_START}x\n  y${PASTE_END} z\n`);
    expect(sent).toEqual(["before", code, "", "/exit", "typed x\n  y z"]);
  });

  it("drops a held paste on Ctrl+C, and at the end only when asked to", () => {
    const { assembler, sent, turn } = assemble();
    assembler.pasteStart();
    assembler.line("a");
    assembler.line("b");
    assembler.pasteEnd(false);
    expect(assembler.drop()).toBe(2);
    assembler.line("c");
    turn();
    expect(sent).toEqual(["c"]);
    assembler.pasteStart();
    assembler.line("d");
    assembler.end(false);
    expect(sent).toEqual(["c"]);
    assembler.pasteStart();
    assembler.line("e");
    assembler.end(true);
    expect(sent).toEqual(["c", "e"]);
  });
});
