import type { PromptOrigin } from "../types.js";

/**
 * One line of the durable inbox (`<home>/inbox.jsonl`, every thread's prompts in one journal). A
 * prompt is `accepted` (fsync'd) before the channel may acknowledge it; `tool` and `done` follow
 * it as the run progresses. A prompt with no `done` line was interrupted (the process died): with
 * a `tool` line it had side effects and is reported, without one it is run again. A compaction
 * writes an answered prompt of a thread not yet cleared as one `ran` line.
 */
export type InboxRecord =
  | {
      t: "accepted";
      id: string;
      /** The thread id in full (directory names of long ids are shortened with a hash). */
      threadId: string;
      at: string;
      text: string;
      images?: Array<{ type: "image"; data: string; mimeType: string }>;
      messageId?: string;
      userId?: string;
      userName?: string;
      /** Written for a guest only: a prompt without it ran (and runs again) as the owner's. */
      role?: "guest";
      /** Written for a prompt guppy sent itself (an event, the heartbeat, subagent results). */
      origin?: PromptOrigin;
    }
  /** Written by earlier versions when a run began; read and ignored (a `tool` line says more). */
  | { t: "started"; id: string; at: string }
  /** A tool call began: the run has (possibly) had side effects. */
  | { t: "tool"; id: string; name: string; args: string }
  | { t: "done"; id: string; at: string; outcome: InboxOutcome }
  /**
   * An answered prompt, kept (without its text) until its thread is cleared: after a crash its
   * log line must not be backfilled as a message posted beside the runs, and the message
   * delivered again is known. Also written for a command the thread acted on (`/new`,
   * `/compact`, steer, abort).
   */
  | { t: "ran"; id: string; threadId: string; messageId?: string }
  /** The thread went idle with every prompt answered: its earlier lines are history. */
  | { t: "cleared"; threadId: string };

/** How an accepted prompt ended: a run's stop reason, or a notice instead of a run. */
export type InboxOutcome =
  | "stop"
  | "length"
  | "aborted"
  | "error"
  | "max_tool_rounds"
  | "interrupted-reported";

export type AcceptedRecord = Extract<InboxRecord, { t: "accepted" }>;

/** A prompt of the inbox that has no `done` line. */
export interface PendingPrompt {
  record: AcceptedRecord;
  /** Tool calls the interrupted run had begun, in order (`name args`). */
  tools: Array<{ name: string; args: string }>;
}

export function isInboxRecord(value: unknown): value is InboxRecord {
  if (value === null || typeof value !== "object") return false;
  const v = value as Record<string, unknown>;
  if (v.t === "cleared") return typeof v.threadId === "string";
  if (typeof v.id !== "string") return false;
  switch (v.t) {
    case "accepted":
      return (
        typeof v.text === "string" && typeof v.at === "string" && typeof v.threadId === "string"
      );
    case "started":
      return typeof v.at === "string";
    case "tool":
      return typeof v.name === "string" && typeof v.args === "string";
    case "done":
      return typeof v.outcome === "string";
    case "ran":
      return typeof v.threadId === "string";
    default:
      return false;
  }
}
