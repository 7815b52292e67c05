import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "@guppy/core";
import { writeFileAtomic } from "@guppy/core/fs";
import type { FollowedThread } from "@guppy/core/state";
import type { StateAdapter } from "chat";

/** `<GUPPY_HOME>/subscriptions.json`: the chat threads guppy follows (docs/channels.md). */
export const SUBSCRIPTIONS_FILE = "subscriptions.json";

export type { FollowedThread } from "@guppy/core/state";

/**
 * The chat threads guppy follows (seed 002: subscribe on first mention). Chat SDK keeps its
 * subscriptions in its state adapter, and the one guppy uses (state-memory) forgets them at a
 * restart and never lets one lapse: this keeps them in the home, written atomically at every
 * change, and ends one after `quietMs` without a message. All channels of a process share the
 * file (thread ids carry their adapter): each change re-reads it first.
 */
export interface ThreadFollows {
  /** Whether `threadId` is followed now; a follow past its quiet period is ended here. */
  isFollowed(threadId: string): boolean;
  follow(threadId: string): void;
  unfollow(threadId: string): void;
  /** A message came in the thread: its quiet period starts again (written at most once a minute). */
  touch(threadId: string): void;
  /** The followed threads, as on disk (tests, docs). */
  list(): FollowedThread[];
}

/** How stale a thread's recorded last activity may get before a message rewrites it. */
const TOUCH_WRITE_MS = 60_000;

export function createThreadFollows(options: {
  home: string;
  quietMs: number;
  logger: Logger;
  now?: () => number;
}): ThreadFollows {
  const { home, quietMs, logger } = options;
  const now = options.now ?? Date.now;
  const file = join(home, SUBSCRIPTIONS_FILE);
  let warned = false;

  const read = (): FollowedThread[] => {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      return [];
    }
    try {
      const parsed: unknown = JSON.parse(text);
      if (!Array.isArray(parsed)) throw new Error("not a JSON array");
      return parsed.filter(
        (f): f is FollowedThread =>
          typeof f?.threadId === "string" &&
          typeof f.since === "string" &&
          typeof f.lastActivity === "string",
      );
    } catch (error) {
      if (!warned) {
        warned = true;
        logger.warn(`channel: ${file} cannot be read (${String(error)}); no thread is followed`);
      }
      return [];
    }
  };

  const write = (follows: readonly FollowedThread[]): void => {
    try {
      writeFileAtomic(file, `${JSON.stringify(follows, null, 2)}\n`, 0o600);
    } catch (error) {
      // Following goes on in memory until the next change; only a restart would forget it.
      logger.warn(`channel: could not save the followed threads: ${String(error)}`);
    }
  };

  /** Followed threads as last read or written (each change re-reads the file first). */
  let cached = read();

  const lapsed = (f: FollowedThread) => now() - Date.parse(f.lastActivity) >= quietMs;

  const change = (fn: (follows: FollowedThread[]) => FollowedThread[]) => {
    cached = fn(read());
    write(cached);
  };

  return {
    isFollowed(threadId) {
      const found = cached.find((f) => f.threadId === threadId);
      if (!found) return false;
      if (!lapsed(found)) return true;
      logger.info("channel: stopped following a quiet thread", { threadId });
      change((all) => all.filter((f) => f.threadId !== threadId));
      return false;
    },
    follow(threadId) {
      const at = new Date(now()).toISOString();
      change((all) => [
        ...all.filter((f) => f.threadId !== threadId),
        { threadId, since: at, lastActivity: at },
      ]);
    },
    unfollow(threadId) {
      if (
        !cached.some((f) => f.threadId === threadId) &&
        !read().some((f) => f.threadId === threadId)
      )
        return;
      change((all) => all.filter((f) => f.threadId !== threadId));
    },
    touch(threadId) {
      const found = cached.find((f) => f.threadId === threadId);
      if (!found || now() - Date.parse(found.lastActivity) < TOUCH_WRITE_MS) return;
      const at = new Date(now()).toISOString();
      change((all) => all.map((f) => (f.threadId === threadId ? { ...f, lastActivity: at } : f)));
    },
    list: () => read(),
  };
}

/**
 * Chat SDK's state adapter with its subscriptions kept by `follows`: `thread.subscribe()`,
 * `unsubscribe()` and the routing of a message to `onSubscribedMessage` go through the file, so a
 * followed thread is still followed after a restart, and a quiet one is routed as unfollowed.
 */
export function followingState(state: StateAdapter, follows: ThreadFollows): StateAdapter {
  return new Proxy(state, {
    get(target, key, receiver) {
      if (key === "subscribe") return async (threadId: string) => follows.follow(threadId);
      if (key === "unsubscribe") return async (threadId: string) => follows.unfollow(threadId);
      if (key === "isSubscribed") return async (threadId: string) => follows.isFollowed(threadId);
      const value: unknown = Reflect.get(target, key, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
