import type { InboxRecord, PendingPrompt } from "./inbox-record.js";

interface ThreadInbox {
  /** Accepted, no `done` yet, in accept order. */
  pending: Map<string, PendingPrompt>;
  /** Answered since the last clear: inbox id → log message id. */
  ran: Map<string, string>;
}

/**
 * The inbox journal's index in memory: each thread's pending and answered prompts, built by
 * applying the journal's lines in order, and what a compaction writes back.
 */
export class InboxIndex {
  private readonly threads = new Map<string, ThreadInbox>();
  /**
   * Every thread's pending prompts by inbox id, in the order accepted across threads: what a
   * replay and a compaction follow. (`threads` is in the order of each thread's first line,
   * answered or not: a thread whose running prompt was answered at a shutdown would go first.)
   */
  private readonly pendingInOrder = new Map<string, PendingPrompt>();
  /** Inbox id → thread id, for the `tool` and `done` lines (they carry only the id). */
  private readonly owners = new Map<string, string>();

  private entry(threadId: string): ThreadInbox {
    let t = this.threads.get(threadId);
    if (!t) {
      t = { pending: new Map(), ran: new Map() };
      this.threads.set(threadId, t);
    }
    return t;
  }

  /** Updates the index with one journal line. */
  apply(record: InboxRecord): void {
    const { threads, pendingInOrder, owners } = this;
    switch (record.t) {
      case "accepted": {
        const p: PendingPrompt = { record, tools: [] };
        this.entry(record.threadId).pending.set(record.id, p);
        pendingInOrder.set(record.id, p);
        owners.set(record.id, record.threadId);
        return;
      }
      case "tool": {
        this.pendingPrompt(record.id)?.tools.push({ name: record.name, args: record.args });
        return;
      }
      case "done": {
        const threadId = owners.get(record.id);
        const t = threadId ? threads.get(threadId) : undefined;
        const p = t?.pending.get(record.id);
        if (!t || !p) return;
        t.pending.delete(record.id);
        pendingInOrder.delete(record.id);
        t.ran.set(record.id, p.record.messageId ?? record.id);
        return;
      }
      case "ran":
        this.entry(record.threadId).ran.set(record.id, record.messageId ?? record.id);
        owners.set(record.id, record.threadId);
        return;
      case "cleared": {
        const t = threads.get(record.threadId);
        if (!t) return;
        for (const id of t.ran.keys()) owners.delete(id);
        t.ran.clear();
        if (t.pending.size === 0) threads.delete(record.threadId);
        return;
      }
      case "started":
        return;
    }
  }

  /** The pending prompt with inbox id `id`, of whichever thread. */
  pendingPrompt(id: string): PendingPrompt | undefined {
    const threadId = this.owners.get(id);
    return threadId ? this.threads.get(threadId)?.pending.get(id) : undefined;
  }

  /** Forgets a pending prompt as if it was never accepted. */
  forget(threadId: string, id: string): void {
    this.threads.get(threadId)?.pending.delete(id);
    this.pendingInOrder.delete(id);
    this.owners.delete(id);
  }

  /** The journal's content after a compaction: the pending prompts still in the order accepted. */
  live(): InboxRecord[] {
    const out: InboxRecord[] = [];
    for (const [threadId, t] of this.threads) {
      for (const [id, messageId] of t.ran) {
        out.push(
          messageId === id ? { t: "ran", id, threadId } : { t: "ran", id, threadId, messageId },
        );
      }
    }
    for (const p of this.pendingInOrder.values()) {
      out.push(p.record);
      for (const tool of p.tools) {
        out.push({ t: "tool", id: p.record.id, name: tool.name, args: tool.args });
      }
    }
    return out;
  }

  pending(threadId: string): PendingPrompt[] {
    return [...(this.threads.get(threadId)?.pending.values() ?? [])];
  }

  promptIds(threadId: string): string[] {
    const t = this.threads.get(threadId);
    if (!t) return [];
    return [
      ...t.ran.values(),
      ...[...t.pending.values()].map((p) => p.record.messageId ?? p.record.id),
    ];
  }

  scan(): PendingPrompt[] {
    return [...this.pendingInOrder.values()];
  }

  uncleared(): string[] {
    const out: string[] = [];
    for (const [threadId, t] of this.threads) {
      if (t.ran.size > 0 && t.pending.size === 0) out.push(threadId);
    }
    return out;
  }

  /** Whether the thread has answered prompts or handled commands since it was last cleared. */
  hasRan(threadId: string): boolean {
    const t = this.threads.get(threadId);
    return t !== undefined && t.ran.size > 0;
  }
}
