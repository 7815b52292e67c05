/**
 * A counting semaphore with a FIFO wait queue: at most `limit` holders at once; waiters are
 * served first come, first served (an actor re-queues at the back after each prompt, so a busy
 * thread cannot starve the others). A waiter that gives a rank — a prompt replayed at start, by
 * its place in the order accepted — goes before every waiter without one, lowest rank first: a
 * thread whose replayed prompt asks for its slot only after its previous prompt ran still gets it
 * before a later-accepted prompt of another thread that asked earlier — and when its previous
 * prompt held the slot, `keepFor` hands the slot straight on to it rather than to a waiter behind.
 */
export interface ConcurrencyLimiter {
  acquire(rank?: number): Promise<void>;
  /**
   * Takes a slot at once when `acquire` would resolve at once (one is free and nobody waits):
   * true; else false, and nothing changes. Lets a caller tell a request that waits from one that
   * does not.
   */
  tryAcquire(): boolean;
  release(): void;
  /**
   * In place of `release()`, for a holder whose next request has `rank`: when that request would
   * be served first (no ranked waiter has a lower rank; ranked ones go before the rest), the holder
   * keeps the slot for it and this returns true. Else false, and nothing changes: release it.
   * Without this, the next request asks only after the slot went to a waiter behind it.
   */
  keepFor(rank: number): boolean;
  readonly active: number;
  readonly waiting: number;
}

interface Ranked {
  rank: number;
  resolve: () => void;
}

export function createConcurrencyLimiter(limit: number): ConcurrencyLimiter {
  let active = 0;
  const waiters: Array<() => void> = [];
  let head = 0;
  /** Ranked waiters, a binary min-heap by rank (empty but for a replay). */
  const ranked: Ranked[] = [];
  const free = () => active < limit && head === waiters.length && ranked.length === 0;
  return {
    acquire(rank) {
      if (free()) {
        active++;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        if (rank === undefined) waiters.push(resolve);
        else pushRanked(ranked, { rank, resolve });
      });
    },
    tryAcquire() {
      if (!free()) return false;
      active++;
      return true;
    },
    release() {
      if (ranked.length > 0) {
        popRanked(ranked)();
        return;
      }
      if (head < waiters.length) {
        const next = waiters[head];
        waiters[head] = noop;
        head++;
        if (head > 1024 && head * 2 > waiters.length) {
          waiters.splice(0, head);
          head = 0;
        }
        next?.();
        return;
      }
      active = Math.max(0, active - 1);
    },
    keepFor(rank) {
      return ranked.length === 0 || (ranked[0] as Ranked).rank > rank;
    },
    get active() {
      return active;
    },
    get waiting() {
      return waiters.length - head + ranked.length;
    },
  };
}

const noop = () => {};

function pushRanked(heap: Ranked[], item: Ranked): void {
  let i = heap.length;
  heap.push(item);
  while (i > 0) {
    const parent = (i - 1) >> 1;
    const above = heap[parent] as Ranked;
    if (above.rank <= item.rank) break;
    heap[i] = above;
    i = parent;
  }
  heap[i] = item;
}

/** Removes the lowest-ranked waiter (the heap is not empty) and returns its resolve. */
function popRanked(heap: Ranked[]): () => void {
  const top = heap[0] as Ranked;
  const last = heap.pop() as Ranked;
  if (heap.length > 0) {
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child =
        right < heap.length && (heap[right] as Ranked).rank < (heap[left] as Ranked).rank
          ? right
          : left;
      const below = heap[child] as Ranked;
      if (below.rank >= last.rank) break;
      heap[i] = below;
      i = child;
    }
    heap[i] = last;
  }
  return top.resolve;
}
