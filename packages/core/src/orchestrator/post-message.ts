import type { Logger } from "../logging/logger.js";
import { oneLine } from "../runner/message-text.js";
import type { Store } from "../store/create-store.js";
import { canonicalThreadId, type LogEntry, parseThreadId } from "../store/thread-layout.js";
import type { ChannelLink, PostResult, ThreadHandle } from "../types.js";
import type { OrchestratorEvent } from "./types.js";

/** What `postMessage` needs of its orchestrator. */
export interface PostDeps {
  store: Store;
  logger: Logger;
  links: ReadonlyMap<string, ChannelLink>;
  emit(event: OrchestratorEvent): void;
  heldElsewhere?(threadId: string): string | undefined;
  /** The thread's live handle (its latest prompt's), else its channel link's. */
  handleOf(threadId: string): ThreadHandle | undefined;
  /** Whether the thread has a folder (it exists here, though its channel may not run). */
  exists(threadId: string): boolean;
}

let sequence = 0;

/**
 * `Orchestrator.postMessage`: the message goes to the thread's channel, its log.jsonl (as guppy's;
 * with `sentFrom` when another thread's run sent it, so backfill brings it into this thread's
 * context before its next run — one path for a loaded, running or inactive thread) and the
 * `message` event (the HTTP API's event stream, the gateway log).
 */
export async function postMessage(
  deps: PostDeps,
  target: { threadId: string } | { adapterId: string; channelId: string },
  text: string,
  from?: string,
): Promise<PostResult> {
  const { logger } = deps;
  let threadId: string;
  let posted = false;
  try {
    if ("threadId" in target) {
      threadId = canonicalThreadId(target.threadId);
      const held = deps.heldElsewhere?.(threadId);
      if (held !== undefined) return { status: "failed", reason: held };
      if (!deps.links.has(parseThreadId(threadId).adapter) && !deps.exists(threadId)) {
        return {
          status: "failed",
          reason: `no thread ${threadId} here (no such folder, and no channel "${parseThreadId(threadId).adapter}" runs)`,
        };
      }
    } else {
      const link = deps.links.get(target.adapterId);
      if (!link?.postToChannel) {
        return {
          status: "failed",
          reason: `no channel "${target.adapterId}" that can open threads runs here`,
        };
      }
      // The channel posts the message as it opens the thread.
      threadId = canonicalThreadId(await link.postToChannel(target.channelId, text));
      posted = true;
    }
  } catch (error) {
    return { status: "failed", reason: oneLine(String((error as Error)?.message ?? error)) };
  }
  const sentFrom = from !== undefined && !sameThread(from, threadId) ? from : undefined;
  sequence = (sequence + 1) % 1_000_000;
  const entry: LogEntry = {
    date: new Date().toISOString(),
    messageId: `sent-${Date.now()}-${sequence}`,
    userId: "guppy",
    userName: "guppy",
    text,
    isBot: true,
    ...(sentFrom ? { sentFrom } : {}),
  };
  try {
    deps.store.appendLog(threadId, entry);
  } catch (error) {
    return {
      status: "failed",
      reason: `could not write the log of ${threadId}: ${oneLine(String(error))}`,
    };
  }
  deps.emit({ type: "message", threadId, text, ...(sentFrom ? { from: sentFrom } : {}) });
  if (!posted) {
    const handle = deps.handleOf(threadId);
    try {
      await (handle?.post ? handle.post(text) : handle?.notice(text));
    } catch (error) {
      logger.warn(`Could not post a message to ${threadId}`, { error: String(error) });
      return {
        status: "failed",
        reason: `it is in the thread's history, but its channel did not take it: ${oneLine(String(error))}`,
      };
    }
  }
  return { status: "posted", threadId };
}

function sameThread(a: string, b: string): boolean {
  try {
    return canonicalThreadId(a) === canonicalThreadId(b);
  } catch {
    return false;
  }
}
