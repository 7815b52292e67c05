import type { RunnerEvent } from "@guppy/core";
import { describe, expect, it } from "vitest";
import { createAnswerText } from "../../../src/channels/http/answer-text.js";

const delta = (text: string): RunnerEvent => ({ type: "text_delta", delta: text });
const call = (id: string): RunnerEvent => ({
  type: "tool_call",
  toolCallId: id,
  name: "bash",
  args: { command: "ls" },
});
const result = (id: string): RunnerEvent => ({
  type: "tool_result",
  toolCallId: id,
  name: "bash",
  isError: false,
  text: "a.txt",
});
const end = (text: string, stopReason: "stop" | "aborted" = "stop"): RunnerEvent => ({
  type: "run_end",
  text,
  stopReason,
});

/** What the answer streams event by event, and its text at the end. */
function play(events: RunnerEvent[]) {
  const answer = createAnswerText();
  const streamed = events.map((e) => answer.add(e));
  expect(streamed.join("")).toBe(answer.text());
  return { streamed, text: answer.text() };
}

describe("createAnswerText", () => {
  it("streams a plain answer delta by delta", () => {
    const { streamed, text } = play([delta("Hel"), delta("lo"), end("Hello")]);
    expect(streamed).toEqual(["Hel", "lo", ""]);
    expect(text).toBe("Hello");
  });

  it("keeps what the model said before its tool calls, a blank line before the next turn", () => {
    const { streamed, text } = play([
      delta("Let me check. "),
      call("1"),
      call("2"),
      result("1"),
      result("2"),
      delta("There is "),
      delta("a.txt."),
      end("There is a.txt."),
    ]);
    expect(text).toBe("Let me check. \n\nThere is a.txt.");
    expect(streamed.filter(Boolean)).toEqual(["Let me check. ", "\n\nThere is ", "a.txt."]);
  });

  it("adds nothing for a turn that called tools without a word", () => {
    expect(play([call("1"), result("1"), delta("Done."), end("Done.")]).text).toBe("Done.");
  });

  it("adds the run's text that came without deltas (guppy's note at the tool-round limit)", () => {
    const note = "I stopped after 2 tool rounds.";
    expect(play([delta("Looking."), call("1"), result("1"), call("2"), end(note)]).text).toBe(
      `Looking.\n\n${note}`,
    );
    expect(play([delta("I stopped"), end(note)]).text).toBe(note);
  });

  it("does not repeat a turn the run ended on (aborted while its tools ran)", () => {
    const events = [delta("Let me check."), call("1"), end("Let me check.", "aborted")];
    expect(play(events).text).toBe("Let me check.");
  });
});
