import { canonicalThreadId } from "../store/thread-layout.js";
import type { RunnerEvent } from "../types.js";

/**
 * Watches a run's events for what its `send_message` calls posted to the run's own thread (no
 * `to` or `channel`, or `to` naming this thread), so that a final answer the agent already sent
 * that way is not posted a second time (seed 004: the message tool's "already sent this round").
 */
export interface DeliveredWatch {
  see(event: RunnerEvent): void;
  /** Whether `answer` is what the run's last successful own-thread `send_message` posted. */
  delivered(answer: string): boolean;
}

export function createDeliveredWatch(threadId: string): DeliveredWatch {
  const pending = new Map<string, string>();
  let last: string | undefined;
  const own = (args: unknown): string | undefined => {
    if (args === null || typeof args !== "object") return undefined;
    const { text, to, channel } = args as { text?: unknown; to?: unknown; channel?: unknown };
    if (typeof text !== "string") return undefined;
    if (typeof channel === "string" && channel !== "") return undefined;
    if (typeof to === "string" && to !== "" && !sameThread(to, threadId)) return undefined;
    return text;
  };
  return {
    see(event) {
      if (event.type === "tool_call" && event.name === "send_message") {
        const text = own(event.args);
        if (text !== undefined) pending.set(event.toolCallId, text);
      } else if (event.type === "tool_result" && event.name === "send_message") {
        const text = pending.get(event.toolCallId);
        pending.delete(event.toolCallId);
        if (text !== undefined && !event.isError) last = text;
      }
    },
    delivered: (answer) =>
      last !== undefined && answer.trim() !== "" && last.trim() === answer.trim(),
  };
}

function sameThread(a: string, b: string): boolean {
  try {
    return canonicalThreadId(a) === canonicalThreadId(b);
  } catch {
    return false;
  }
}
