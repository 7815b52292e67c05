import { spillOutput } from "../tools/spill-output.js";
import type { SubagentInfo } from "../types.js";

/** A finished child's answer, ready for its parent. */
export interface ChildResult {
  id: string;
  label?: string;
  state: Exclude<SubagentInfo["state"], "running">;
  /** Its final answer (failed: the error; never ended: empty). */
  answer: string;
  /** True when the child was still running when guppy stopped (known from the journal). */
  interrupted?: true;
}

const name = (r: ChildResult) => (r.label ? `${r.id} ("${r.label}")` : r.id);

/**
 * One child's answer as its parent reads it: in full up to `maxChars`, else saved whole to the
 * parent's artifacts and given as an excerpt with the file's path — like any long tool output.
 */
export function describeResult(
  result: ChildResult,
  maxChars: number,
  artifactsDir: () => string,
): string {
  if (result.interrupted) {
    return `Subagent ${name(result)} was interrupted when guppy stopped before it finished; its work so far is in its folder (subagents/). Run it again if it is still needed.`;
  }
  const answer = spillOutput({
    text: result.answer,
    maxChars,
    dir: artifactsDir,
    label: "subagent",
  }).text;
  switch (result.state) {
    case "done":
      return `Subagent ${name(result)} finished. Its answer:\n${answer}`;
    case "failed":
      return `Subagent ${name(result)} failed: ${answer}`;
    case "aborted":
      return `Subagent ${name(result)} was stopped before it finished.${answer ? ` Its partial answer:\n${answer}` : ""}`;
  }
}

/** The prompt that hands children's results to their parent: one for all that arrived. */
export function resultsPrompt(texts: readonly string[]): string {
  const head =
    texts.length === 1
      ? "[Subagent result] A subagent you started has ended."
      : `[Subagent results] ${texts.length} subagents you started have ended.`;
  return `${head} Continue with the task they were for and report to the user as needed.\n\n${texts.join("\n\n")}`;
}
