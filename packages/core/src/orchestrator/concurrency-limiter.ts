/**
 * A counting semaphore with a FIFO wait queue: at most `limit` holders at once; waiters are
 * served first come, first served (an actor re-queues at the back after each prompt, so a busy
 * thread cannot starve the others).
 */
export interface ConcurrencyLimiter {
  acquire(): Promise<void>;
  release(): void;
  readonly active: number;
  readonly waiting: number;
}

export function createConcurrencyLimiter(limit: number): ConcurrencyLimiter {
  let active = 0;
  const waiters: Array<() => void> = [];
  let head = 0;
  return {
    acquire() {
      if (active < limit && head === waiters.length) {
        active++;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => waiters.push(resolve));
    },
    release() {
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
    get active() {
      return active;
    },
    get waiting() {
      return waiters.length - head;
    },
  };
}

const noop = () => {};
