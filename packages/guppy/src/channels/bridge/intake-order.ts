/**
 * Hands a thread's incoming messages to the bridge in the order they were sent. Telegram's
 * adapter passes the commands of a getUpdates batch (`/new`, and any `/word`) through a shorter
 * path of the Chat SDK than the batch's other messages, so a command overtook the messages sent
 * before it. Every message of a batch reaches the bridge within one turn of the event loop (the
 * SDK's steps are promise callbacks), so the messages of a thread that arrive in a turn are
 * handled at its end, sorted by their sequence number (Telegram's message_id) when all have one,
 * else as they came. The channel's handler resolves right after its message was handled.
 */
export interface IntakeOrder {
  /** Runs `handle` in its place among the thread's messages of this turn. */
  add(threadId: string, sequence: number | undefined, handle: () => void): Promise<void>;
}

interface Entry {
  sequence: number | undefined;
  handle: () => void;
  done: () => void;
  failed: (error: unknown) => void;
}

export function createIntakeOrder(): IntakeOrder {
  let waiting = new Map<string, Entry[]>();
  let scheduled = false;

  const flush = () => {
    scheduled = false;
    const threads = waiting;
    waiting = new Map();
    for (const entries of threads.values()) {
      if (entries.every((e) => e.sequence !== undefined)) {
        entries.sort((a, b) => (a.sequence as number) - (b.sequence as number));
      }
      for (const entry of entries) {
        try {
          entry.handle();
          entry.done();
        } catch (error) {
          entry.failed(error);
        }
      }
    }
  };

  return {
    add(threadId, sequence, handle) {
      return new Promise<void>((done, failed) => {
        const entries = waiting.get(threadId) ?? [];
        entries.push({ sequence, handle, done, failed });
        waiting.set(threadId, entries);
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
  };
}
