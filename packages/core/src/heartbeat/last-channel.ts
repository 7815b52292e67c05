import { readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../fs/write.js";
import type { Logger } from "../logging/logger.js";
import { parseThreadId } from "../store/thread-layout.js";
import type { ActorMessage, Orchestrator, SendResult, ThreadStatus } from "../types.js";

/** Where the owner was last active on a chat channel: `<home>/last-channel.json`. */
export const LAST_CHANNEL_FILE = "last-channel.json";

/**
 * Which adapters (the first part of a thread id) the heartbeat goes to: the app names them from
 * its channels' capabilities, so core knows no channel.
 */
export interface HeartbeatAdapters {
  /** The channels a person chats on: the heartbeat prefers the owner's latest thread there. */
  readonly chat: readonly string[];
  /** The threads it falls back to when the owner never chatted (the API's, the terminal's). */
  readonly fallback: readonly string[];
}

/**
 * The owner's most recently active chat thread, kept on disk so a restart knows it (seed 004's
 * RecordLastChannel). Only an owner's own prompt moves it: a guest's, or one guppy sent itself
 * (the heartbeat, an event), never does.
 */
export interface LastChannel {
  readonly adapters: HeartbeatAdapters;
  get(): string | undefined;
  record(threadId: string): void;
}

export function createLastChannel(
  home: string,
  logger: Logger,
  adapters: HeartbeatAdapters,
): LastChannel {
  const path = join(home, LAST_CHANNEL_FILE);
  let current: string | undefined;
  let loaded = false;
  const load = () => {
    if (loaded) return;
    loaded = true;
    try {
      const value = JSON.parse(readFileSync(path, "utf8")) as { threadId?: unknown };
      if (typeof value.threadId === "string") current = value.threadId;
    } catch {
      // None yet (or unreadable): the heartbeat falls back to the HTTP and terminal threads.
    }
  };
  return {
    adapters,
    get() {
      load();
      return current;
    },
    record(threadId) {
      load();
      if (threadId === current) return;
      current = threadId;
      try {
        writeFileAtomic(path, `${JSON.stringify({ threadId, at: new Date().toISOString() })}\n`);
      } catch (error) {
        logger.warn(`Could not write ${LAST_CHANNEL_FILE}`, { error: String(error) });
      }
    },
  };
}

/** Whether a prompt is a person's own on a chat channel, as owner: the kind that moves the record. */
export function isOwnerChatPrompt(
  threadId: string,
  message: ActorMessage,
  chatAdapters: readonly string[],
): boolean {
  if (message.type !== "prompt" || message.origin || message.role === "guest") return false;
  try {
    return chatAdapters.includes(parseThreadId(threadId).adapter);
  } catch {
    return false;
  }
}

/**
 * `orchestrator` whose `send` records the thread of each owner's chat prompt it accepts: what the
 * app hands its channels, so no channel has to know about the heartbeat.
 */
export function recordLastChannel<O extends Orchestrator>(orchestrator: O, last: LastChannel): O {
  return {
    ...orchestrator,
    send(threadId: string, message: ActorMessage): SendResult {
      const result = orchestrator.send(threadId, message);
      if (result.status === "queued" && isOwnerChatPrompt(threadId, message, last.adapters.chat)) {
        last.record(threadId);
      }
      return result;
    },
  };
}

/**
 * The thread a beat runs in: the owner's last chat thread, else the most recently active thread
 * of a fallback adapter (a subagent's thread, `…~sub-<n>`, never).
 */
export function heartbeatThread(
  last: LastChannel,
  threads: () => readonly ThreadStatus[],
): string | undefined {
  const recorded = last.get();
  if (recorded) return recorded;
  let best: ThreadStatus | undefined;
  for (const thread of threads()) {
    if (!thread.lastActivity || thread.threadId.includes("~")) continue;
    let adapter: string;
    try {
      adapter = parseThreadId(thread.threadId).adapter;
    } catch {
      continue;
    }
    if (!last.adapters.fallback.includes(adapter)) continue;
    if (!best?.lastActivity || thread.lastActivity > best.lastActivity) best = thread;
  }
  return best?.threadId;
}
