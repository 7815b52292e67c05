// What `search_channel` finds: a message of guppy's own record of a thread or channel (its logs,
// read through the state seam) or of the chat platform's history (types.ts: PlatformHistory,
// which the app hands over on a thread's handle).

export type { PlatformHistory, PlatformMessage, SearchScope } from "../types.js";

/** One message that matched a search. */
export interface SearchHit {
  /** Epoch milliseconds. */
  time: number;
  author: string;
  text: string;
  threadId: string;
  /** The message id, when known (the de-duplication key between the log and the platform). */
  messageId?: string;
  /** Where it was found: guppy's log of the thread, or the chat platform's history. */
  source: "log" | "platform";
}
