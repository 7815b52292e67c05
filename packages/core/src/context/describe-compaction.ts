import type { CompactionOutcome } from "../types.js";

const n = (x: number) => Math.round(x).toLocaleString("en-US");

/** What a /compact did, in one line for the user (terminal and chat channels alike). */
export function describeCompaction(outcome: CompactionOutcome): string {
  if (!outcome.compacted) {
    // Stopped (/stop, Ctrl+C) is not "nothing to compact": there was, and it is left as it was.
    return outcome.reason === "stopped"
      ? "Compaction stopped; the context is as it was."
      : `Nothing to compact: ${outcome.reason}.`;
  }
  const i = outcome.info;
  return i.method === "summary"
    ? `Compacted: ${i.removedMessages} messages summarised, ~${n(i.tokensBefore)} → ~${n(i.tokensAfter)} tokens.`
    : `The summary request failed (${i.error ?? "no answer"}); dropped the ${i.removedMessages} oldest messages instead (~${n(i.tokensBefore)} → ~${n(i.tokensAfter)} tokens).`;
}
