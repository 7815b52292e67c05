import type { RunnerEvent } from "@guppy/core";

/** Between the texts of two turns of a run. */
export const TURN_SEPARATOR = "\n\n";

/**
 * A chat completion's answer, built from its run's events in the same way whether it is streamed
 * or not, so that both give the same content.
 *
 * It is the text of every turn of the run, turns apart by a blank line — the model's words before
 * a tool call too: whether a turn ends in a tool call is known only when it ends, a stream has
 * sent its text by then and cannot take it back, and holding every turn's text until its end
 * would deliver a plain answer in one piece at the end instead of streaming it. The last turn's
 * text is the run's own (`run_end.text`), which may hold more than its deltas did (guppy's note
 * at the tool-round limit comes without any).
 */
export interface AnswerText {
  /** Takes the run's next event; returns what it adds to the answer ("" for nothing). */
  add(event: RunnerEvent): string;
  /** The answer so far. */
  text(): string;
}

export function createAnswerText(): AnswerText {
  let answer = "";
  /** The text of the turn under way (since the last tool call). */
  let turn = "";
  /** The text of the turn that asked for the last tool calls. */
  let toolTurn = "";
  let inTools = false;
  const append = (text: string) => {
    const out = turn === "" && answer !== "" ? `${TURN_SEPARATOR}${text}` : text;
    turn += text;
    answer += out;
    return out;
  };
  return {
    add(event) {
      switch (event.type) {
        case "text_delta":
          inTools = false;
          return event.delta === "" ? "" : append(event.delta);
        case "tool_call":
          // The first call of a batch ends the turn that asked for it.
          if (!inTools) {
            toolTurn = turn;
            turn = "";
            inTools = true;
          }
          return "";
        case "run_end": {
          const final = event.text;
          // The run ended on the turn that asked for tools (aborted while they ran): said already.
          if (turn === "" && inTools && final === toolTurn) return "";
          // Deltas that are not the start of the run's text cannot be mended: they stand.
          if (!final.startsWith(turn) || final === turn) return "";
          return append(final.slice(turn.length));
        }
        default:
          return "";
      }
    },
    text: () => answer,
  };
}
