import type { ThreadJson } from "../../api/threads.js";

// How the chat page words a thread's parts: its channel, state, times and figures.

/** The channel of a thread id: its adapter (`telegram:123:default` → telegram). */
export function channelOf(threadId: string): string {
  const colon = threadId.indexOf(":");
  return colon === -1 ? threadId : threadId.slice(0, colon);
}

/** A subagent's thread (`…~sub-<n>`): shown under its parent, never as a thread of its own. */
export const isSubagentThread = (threadId: string) => /~sub-[0-9]+$/.test(threadId);

/** The state as the page shows it: an unloaded thread ("inactive") is idle. */
export function stateLabel(t: Pick<ThreadJson, "state">): "idle" | "running" | "waiting" {
  return t.state === "inactive" ? "idle" : t.state;
}

/** A fresh thread id for the page's "New thread": `http:web:<random>`. */
export function newThreadId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(6));
  return `http:web:${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}
