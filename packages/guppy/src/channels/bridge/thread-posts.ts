/**
 * The bridge's own posts (command replies, access replies, "not accepted"), one at a time per
 * chat thread and in the order they were asked for — never on the channel's intake path: a post
 * waiting out a 429 holds back only the later posts of its own thread.
 */
export interface ThreadPosts {
  /** Runs `send` after the thread's earlier posts; resolves when it is done (never rejects). */
  post(threadId: string, send: () => Promise<void>): Promise<void>;
}

export function createThreadPosts(): ThreadPosts {
  const chains = new Map<string, Promise<void>>();
  return {
    post(threadId, send) {
      const next = (chains.get(threadId) ?? Promise.resolve()).then(send).catch(() => {});
      chains.set(threadId, next);
      void next.then(() => {
        if (chains.get(threadId) === next) chains.delete(threadId);
      });
      return next;
    },
  };
}
