import type { InboxRecord } from "../state/types.js";

// The inbox's records are state (state/types.ts); what reads the file checks each line here.
export type {
  AcceptedRecord,
  InboxOutcome,
  InboxRecord,
  PendingPrompt,
} from "../state/types.js";

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
