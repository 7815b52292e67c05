import type { AcceptedRecord, InboxOutcome, PendingPrompt } from "./inbox-record.js";

/**
 * The durable inbox: one journal for all threads (`<home>/inbox.jsonl`, see inbox-journal.ts) and
 * its index in memory. `accept` is fsync'd before it returns (or, deferred, shares a group
 * commit); progress lines (`tool`, `done`) are plain appends: they survive a killed process, and
 * after a power cut the worst case is a prompt re-run or reported twice. When the journal grows
 * past a size it is rewritten with what is still needed: unanswered prompts with their tool
 * lines, and the ids of answered prompts of threads not yet cleared.
 */
export interface Inbox {
  /**
   * Appends a prompt. With `deferSync` false (the default) it is fsync'd before this returns;
   * with true it is written at the end of the event-loop turn (or at `written()`, whichever comes
   * first; then it survives a killed process) and `synced` resolves once it is fsync'd.
   */
  accept(
    threadId: string,
    record: Omit<AcceptedRecord, "t" | "id" | "at" | "threadId">,
    deferSync?: boolean,
  ): { record: AcceptedRecord; synced?: Promise<void> };
  /**
   * Makes sure the accepted line of `record` is in the journal before its run writes anything
   * (log, context, tool lines): when it is still deferred, the deferred accepts are written now.
   * A prompt that waited for its slot was written at the end of its turn already, with the rest
   * of that turn's: nothing to do. Never throws (a failure is logged, and `synced` of those
   * prompts rejects). False when the line could not be written (a full disk): the prompt is not
   * durable, so it must not run — see `unsaved`.
   */
  written(record: AcceptedRecord): boolean;
  /** Forgets a prompt whose accepted line never reached the journal (`written` said false). */
  unsaved(record: AcceptedRecord): void;
  /**
   * A channel message the thread acted on without a prompt (`/new`, `/compact`, steer, abort): its
   * id is kept like an answered prompt's (a `ran` line, a plain append) until the thread is
   * cleared, so the message delivered again after a restart is recognised. Never throws.
   */
  handled(threadId: string, messageId: string): void;
  tool(threadId: string, id: string, name: string, args: unknown): void;
  done(threadId: string, id: string, outcome: InboxOutcome): void;
  /** Accepted prompts without a `done` line, in the order they were accepted. */
  pending(threadId: string): PendingPrompt[];
  /**
   * The log message ids (`messageId`, else the inbox id) of every prompt of the thread since it
   * was last cleared, answered or not.
   */
  promptIds(threadId: string): string[];
  /**
   * Every unanswered prompt (read at start to replay them), in the order accepted across threads
   * (each record names its thread).
   */
  scan(): PendingPrompt[];
  /**
   * The threads with answered prompts or handled commands not cleared yet and nothing pending: at
   * a start, those no actor will clear unless a message comes to them (see the orchestrator's
   * `start`).
   */
  uncleared(): string[];
  /** Forgets the thread's answered prompts (call only when nothing of it is pending). */
  clear(threadId: string): void;
  /** Syncs what is written and closes the journal (shutdown). */
  close(): void;
}

/**
 * Where a journal lives and the lock its owner holds: by default `<home>/inbox.jsonl` under
 * `<home>/inbox.lock` (the gateway's, for every thread); `guppy chat` keeps its session's in the
 * thread's folder under its `chat.lock`.
 */
export interface InboxLocation {
  file: string;
  /** Takes the lock (throws when another process holds it); returns its release. */
  lock(): () => void;
}
