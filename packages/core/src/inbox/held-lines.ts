import type { Logger } from "../logging/logger.js";
import type { InboxJournal } from "./inbox-journal.js";
import type { InboxRecord } from "./inbox-record.js";

/** Progress lines kept for a journal the disk refuses, at most (memory stays bounded). */
const MAX_HELD = 10_000;
const HELD_RETRY_MS = 5000;

/**
 * Progress lines the journal refused (a full disk), oldest first: written before the next line
 * and every few seconds until they go through. A lost `tool` line would have its prompt run
 * again after a restart (its actions repeated), a lost `done` line its answer replayed.
 */
export class HeldLines {
  private held: InboxRecord[] = [];
  private timer: ReturnType<typeof setInterval> | undefined;

  /** `retryMs`: how often the held lines are tried again (default 5 s). */
  constructor(
    private readonly journal: InboxJournal,
    private readonly path: string,
    private readonly logger: Logger,
    private readonly retryMs = HELD_RETRY_MS,
  ) {}

  get size(): number {
    return this.held.length;
  }

  /** Writes the held lines (with `then`, if given, after them); throws when the journal refuses. */
  write(then?: InboxRecord): void {
    if (this.held.length === 0) {
      if (then) this.journal.append([then]);
      return;
    }
    this.journal.append(then ? [...this.held, then] : this.held);
    this.held = [];
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.logger.info(`Wrote the inbox lines kept while ${this.path} could not be written`);
  }

  /** Keeps a line the journal refused, and starts retrying. */
  hold(record: InboxRecord, error: unknown): void {
    if (this.held.length === 0) {
      this.logger.error(
        `Could not write the inbox journal ${this.path}; the line is kept and retried`,
        { error: String(error) },
      );
    }
    if (this.held.length < MAX_HELD) this.held.push(record);
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.retry(), this.retryMs);
      this.timer.unref?.();
    }
  }

  /** Tries the held lines again; still no room: the timer tries again. */
  retry(): void {
    try {
      this.write();
    } catch {
      // Still no room: the timer tries again.
    }
  }

  /** Forgets the held lines: a compaction wrote the index they were applied to. */
  drop(): void {
    this.held = [];
  }

  stopRetrying(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }
}
