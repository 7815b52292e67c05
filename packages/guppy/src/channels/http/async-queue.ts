/**
 * A push queue read with `for await`: values arrive synchronously and a reader drains them (an
 * SSE writer; the chat's prompts as the terminal assembles them).
 */
export interface AsyncQueue<T> extends AsyncIterable<T> {
  push(value: T): void;
  /** Forgets the values not read yet. */
  drop(): void;
  close(): void;
}

export function createAsyncQueue<T>(): AsyncQueue<T> {
  const items: T[] = [];
  let closed = false;
  let wake: (() => void) | undefined;
  return {
    push(value) {
      if (closed) return;
      items.push(value);
      wake?.();
    },
    drop() {
      items.length = 0;
    },
    close() {
      closed = true;
      wake?.();
    },
    async *[Symbol.asyncIterator]() {
      while (true) {
        while (items.length > 0) yield items.shift() as T;
        if (closed) return;
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
      }
    },
  };
}
