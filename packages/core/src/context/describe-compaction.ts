import type { CompactionOutcome } from "./types.js";

const n = (x: number) => Math.round(x).toLocaleString("en-US");
const messages = (count: number) => `${count} older message${count === 1 ? "" : "s"}`;

/**
 * What a /compact did, in one line for the user (terminal and chat channels alike). It says what
 * happened in the user's terms: a conversation too short to compact is "nothing to compact yet",
 * not an error; a summary that saved little (a few short messages, whose summary is about as
 * long) says so rather than boasting of a shrink.
 */
export function describeCompaction(outcome: CompactionOutcome): string {
  if (!outcome.compacted) {
    // Stopped (/stop, Ctrl+C) is not "nothing to compact": there was, and it is left as it was.
    return outcome.reason === "stopped"
      ? "Compaction stopped; the context is as it was."
      : `Nothing to compact yet: ${outcome.reason}.`;
  }
  const i = outcome.info;
  const tokens = `~${n(i.tokensBefore)} → ~${n(i.tokensAfter)} tokens`;
  if (i.method !== "summary") {
    return `The summary request failed (${i.error ?? "no answer"}); dropped the ${messages(i.removedMessages)} instead (${tokens}).`;
  }
  // Less than a tenth saved: the summary took about the room of what it replaced (or more).
  const saved = i.tokensBefore - i.tokensAfter;
  if (saved < i.tokensBefore / 10) {
    return `Summarised ${messages(i.removedMessages)}, which saved ${saved > 0 ? "little" : "no"} room (${tokens}): the conversation was short enough as it was.`;
  }
  return `Summarised ${messages(i.removedMessages)} (${tokens}).`;
}
