import type { AgentMessage } from "@mariozechner/pi-agent-core";
import type { LogEntry } from "../store/thread-layout.js";
import type { PromptOrigin, Role, SavedThreadStatus } from "../types.js";

// The state seam: everything guppy keeps, as interfaces a backend implements. The file backend
// (state/file-*.ts, store/, inbox/, usage/, events/ and guppy's access/ today) writes the layout
// of docs/architecture.md "What guppy keeps", so a home written by any release keeps working.
// What tools and the sandbox work on (workspace, memory Markdown, skills, artifacts,
// attachments) stays files in every backend and is not here.
//
// Reads are asynchronous (a database answers later). Appends on a run's path are not: they are
// queued in order and `whenSaved` (or the promise of an accept) says when they are durable, as
// the file store does today, so a run never waits on a round trip per line.

export type { LogEntry } from "../store/thread-layout.js";

// ---------------------------------------------------------------------------------------------
// A thread's log and context

/**
 * A place in a thread's log, given by one read to continue from in the next. Opaque: only the
 * backend that gave it reads it (the file backend keeps a position in the file in it).
 */
export type LogCursor = string & { readonly __logCursor: never };

/** A page read forwards: `next` is where the following page (or later appends) start. */
export interface ForwardLogPage {
  /** Oldest first. */
  entries: LogEntry[];
  next: LogCursor;
  /** The page reached the log's end (the entries written so far). */
  atEnd: boolean;
}

/** A page read backwards from the end, or from before a cursor or a message. */
export type BackwardLogPage =
  | {
      status: "found";
      /** Oldest first. */
      entries: LogEntry[];
      /** Where the older page ends; null when this page starts the log. */
      older: LogCursor | null;
    }
  /** `before` named a message that is not in the log. */
  | { status: "unknown_before" };

/** Where a backward read starts: before a cursor, or before a message of the log. */
export type LogPosition = { cursor: LogCursor } | { messageId: string };

/** One message of a thread's context: a model message, or a line this version does not know. */
export type ContextRecord = AgentMessage | { role?: unknown; [key: string]: unknown };

/**
 * Reading a thread's log (the human-readable history, no tool results) and its current context,
 * from any process: the HTTP worker, `search_channel`, the CLI. A torn line (a crash mid-write)
 * and a line that is not an entry are left out; a thread with no log reads as empty.
 */
export interface ThreadLogReader {
  /** The whole log, oldest first. */
  readAll(threadId: string): Promise<LogEntry[]>;
  /** Up to `limit` entries from the log's start, or after `after`. */
  readForward(
    threadId: string,
    page: { limit: number; after?: LogCursor },
  ): Promise<ForwardLogPage>;
  /** Up to `limit` entries from the log's end, or before `before`. */
  readBackward(
    threadId: string,
    page: { limit: number; before?: LogPosition },
  ): Promise<BackwardLogPage>;
  /**
   * The log's entries newest first, read lazily: a caller that stops early pays for what it
   * read. `mayMatch` is a cheap test of an entry's stored text (a JSON line in the file
   * backend): entries it refuses may be skipped unparsed — a hint, a backend may ignore it.
   */
  newestFirst(
    threadId: string,
    options?: { mayMatch?: (stored: string) => boolean; signal?: AbortSignal },
  ): AsyncIterable<LogEntry>;
  /** When the log was last appended to (epoch ms); undefined when the thread has no log. */
  lastWritten(threadId: string): Promise<number | undefined>;
  /** The threads of `threadId`'s channel that have a log (subagents' excluded), any order. */
  channelThreads(threadId: string): Promise<string[]>;
  /** The thread's current context (what `/new` archived is not in it), oldest first. */
  readContext(threadId: string): Promise<ContextRecord[]>;
}

/**
 * Writing a thread's log and context: what a thread's run and its channel do (the file backend:
 * store/create-store.ts). Appends are queued in order, never thrown for a full disk.
 */
export interface ThreadLogWriter {
  appendLog(threadId: string, entry: LogEntry): void;
  /** The context as the next run starts from it (appended messages not yet durable included). */
  loadContext(threadId: string): AgentMessage[];
  appendContext(threadId: string, messages: readonly AgentMessage[]): void;
  /** Replaces the context whole (a compaction, a repair). */
  replaceContext(threadId: string, messages: readonly AgentMessage[]): void;
  /**
   * `/new`: puts the current context aside (kept, no longer read as current); the log goes on.
   * Returns a name of the archive, undefined when there was no context.
   */
  archiveContext(threadId: string): string | undefined;
  /** Resolves once everything appended for the thread is durable; undefined when it is. */
  whenSaved(threadId: string): Promise<void> | undefined;
}

/** A thread's small records beside its log. */
export interface ThreadRecords {
  /** The figures of the thread's last deactivation (`status.json`). */
  readStatus(threadId: string): SavedThreadStatus | undefined;
  saveStatus(threadId: string, status: SavedThreadStatus): void;
  /** How far the context has caught up with the log (backfill, `log-cursor`). */
  readBackfillCursor(threadId: string): BackfillCursor;
  saveBackfillCursor(threadId: string, cursor: BackfillCursor): void;
  /** Every thread guppy keeps anything of. */
  listThreads(): Promise<string[]>;
}

/** Log entries the context has caught up with, and where they end when known. */
export interface BackfillCursor {
  count: number;
  at?: LogCursor;
}

// ---------------------------------------------------------------------------------------------
// The inbox journal

/**
 * One record of the durable inbox (the file backend: `<home>/inbox.jsonl`, every thread's
 * prompts in one journal). A prompt is `accepted` (durable) before the channel may acknowledge
 * it; `tool` and `done` follow it as the run progresses. A prompt with no `done` was interrupted
 * (the process died): with a `tool` record it had side effects and is reported, without one it
 * is run again. A compaction writes an answered prompt of a thread not yet cleared as `ran`.
 */
export type InboxRecord =
  | {
      t: "accepted";
      id: string;
      /** The thread id in full (directory names of long ids are shortened with a hash). */
      threadId: string;
      at: string;
      text: string;
      images?: Array<{ type: "image"; data: string; mimeType: string }>;
      messageId?: string;
      userId?: string;
      userName?: string;
      /** Written for a guest only: a prompt without it ran (and runs again) as the owner's. */
      role?: "guest";
      /** Written for a prompt guppy sent itself (an event, the heartbeat, subagent results). */
      origin?: PromptOrigin;
    }
  /** Written by earlier versions when a run began; read and ignored (a `tool` line says more). */
  | { t: "started"; id: string; at: string }
  /** A tool call began: the run has (possibly) had side effects. */
  | { t: "tool"; id: string; name: string; args: string }
  | { t: "done"; id: string; at: string; outcome: InboxOutcome }
  /**
   * An answered prompt, kept (without its text) until its thread is cleared: after a crash its
   * log line must not be backfilled as a message posted beside the runs, and the message
   * delivered again is known. Also written for a command the thread acted on (`/new`,
   * `/compact`, steer, abort).
   */
  | { t: "ran"; id: string; threadId: string; messageId?: string }
  /** The thread went idle with every prompt answered: its earlier records are history. */
  | { t: "cleared"; threadId: string };

/** How an accepted prompt ended: a run's stop reason, or a notice instead of a run. */
export type InboxOutcome =
  | "stop"
  | "length"
  | "aborted"
  | "error"
  | "max_tool_rounds"
  | "interrupted-reported";

export type AcceptedRecord = Extract<InboxRecord, { t: "accepted" }>;

/** A prompt of the inbox that has no `done` record. */
export interface PendingPrompt {
  record: AcceptedRecord;
  /** Tool calls the interrupted run had begun, in order (`name args`). */
  tools: Array<{ name: string; args: string }>;
}

/** The inbox journal (the file backend: inbox/inbox-journal.ts). */
export interface InboxStore {
  /** The records there were when it was opened: what `pending` is worked out from at start. */
  readonly loaded: readonly InboxRecord[];
  /** Accepts prompts: resolves once they are durable (then the channel may acknowledge). */
  accept(records: readonly AcceptedRecord[]): Promise<void>;
  /** Progress of a run (`tool`, `done`, `ran`, `cleared`): in order, not waited for. */
  append(records: readonly InboxRecord[]): void;
  /** Replaces the journal with `records` (a compaction: the records still needed). */
  rewrite(records: readonly InboxRecord[]): void;
  close(): void;
}

// ---------------------------------------------------------------------------------------------
// The usage ledger

/** One model request as the ledger keeps it (the file backend: `<home>/usage.jsonl`). */
export interface UsageRecord {
  /** ISO time the answer's usage arrived. */
  time: string;
  /** The thread the request was made for (a subagent's: `…~sub-<n>`). */
  thread: string;
  /** `provider/model-id`. */
  model: string;
  input: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
  /** Dollars, from the model's prices (`modelCost` for a custom endpoint); 0 on a subscription. */
  cost: number;
  /** Made through a subscription's sign-in (OAuth): no spend per token. */
  subscription?: true;
}

/** The usage ledger: appended by whichever process made a request, never rewritten. */
export interface UsageLedger {
  /** Records a request; a failure is logged, never thrown (bookkeeping never fails a run). */
  record(record: UsageRecord): void;
  /**
   * Calls `each` with every record after `from` (the start when absent); returns where the next
   * fold starts, or "restart" when the ledger was replaced since `from`.
   */
  fold(
    each: (record: UsageRecord) => void,
    from?: LedgerCursor,
  ): Promise<{ next: LedgerCursor; skipped: number } | "restart">;
}

/** A place in the usage ledger (opaque, like LogCursor). */
export type LedgerCursor = string & { readonly __ledgerCursor: never };

// ---------------------------------------------------------------------------------------------
// Scheduled events' slots

/**
 * What happened to one time slot of a scheduled event (the file backend:
 * `<home>/events/.runs.jsonl`). `firing`: the slot's prompt is being sent (durable before the
 * send: a restart never sends the slot again); `missed`: a periodic slot that passed while
 * guppy was down (`count` slots up to `slot`), never replayed; `skipped`: the orchestrator did
 * not take the prompt (`reason`: busy, shutting down…). `slot`: epoch ms.
 */
export interface RunRecord {
  id: string;
  slot: number;
  status: "firing" | "missed" | "skipped";
  /** When it was written, epoch ms. */
  at: number;
  late?: true;
  count?: number;
  reason?: string;
}

/** The per-event, per-slot journal the event bus consults before every firing. */
export interface EventSlotStore {
  /** The latest slot recorded for event `id` (any status), epoch ms. */
  lastSlot(id: string): number | undefined;
  /** Records durably, all or none (throws if refused: the slots are then not sent). */
  record(records: readonly RunRecord[]): void;
  /** Keeps the last record of each event `keep` says; forgets the others. */
  compact(keep: (last: RunRecord) => boolean): void;
  close(): void;
}

// ---------------------------------------------------------------------------------------------
// Access: pairing, admitted users and roles, invites

/** How an admitted user got in. */
export type AdmittedVia = "pairing" | "invite" | "allowlist";

/**
 * A user the owner admitted (pairing approval or invite), or the recorded role of a user in
 * GUPPY_ALLOWED_USERS (`via: "allowlist"`: such an entry admits no one by itself — taking the id
 * out of the allowlist still shuts the user out; it only says which role the allowlist gives).
 */
export interface ApprovedUser {
  id: string;
  name?: string;
  approvedAt: string;
  via: AdmittedVia;
  /** Absent: admitted before roles existed, an owner (see `announceOwners`). */
  role?: Role;
}

/** A pairing request waiting for `guppy pairing approve <channel> <code>`. */
export interface PendingPairing {
  code: string;
  userId: string;
  userName?: string;
  createdAt: string;
}

/** A one-time invite code made by `guppy invite create <channel>`. */
export interface Invite {
  code: string;
  createdAt: string;
  /** The role it admits as; absent (made before roles existed): guest, like a new invite. */
  role?: Role;
}

/**
 * A pairing approval its user has not been told of yet: written by `guppy pairing approve`,
 * posted to the user by the running gateway (at once, or at its next start) and then removed.
 */
export interface Welcome {
  userId: string;
  userName?: string;
  role: Role;
  approvedAt: string;
}

/**
 * Who may talk to guppy, per chat channel (the file backend: guppy's access/access-store.ts,
 * `<home>/access/<channel>/*.json`). Every read is fresh: a change by `guppy pairing approve`
 * takes effect on a running gateway.
 */
export interface AccessRecords {
  approved(channel: string): ApprovedUser[];
  saveApproved(channel: string, users: readonly ApprovedUser[]): void;
  pending(channel: string): PendingPairing[];
  savePending(channel: string, pending: readonly PendingPairing[]): void;
  invites(channel: string): Invite[];
  saveInvites(channel: string, invites: readonly Invite[]): void;
  /** One line per refused message (an audit trail, never read back by guppy). */
  logRefusal(entry: Record<string, unknown>): void;
}

// ---------------------------------------------------------------------------------------------
// Small records: a key-value store

/** The owner's most recently active chat thread (the heartbeat's thread). */
export interface LastChannelRecord {
  threadId: string;
  /** ISO 8601. */
  at: string;
}

/** One chat thread guppy follows (a mention subscribed it). */
export interface FollowedThread {
  threadId: string;
  /** ISO 8601: when it was followed (the mention). */
  since: string;
  /** ISO 8601: the last message seen in it; the quiet period runs from here. */
  lastActivity: string;
}

/**
 * The small records, by namespace: what a key names and the value it holds. The file backend
 * keeps each where it is today (`last-channel.json`, `subscriptions.json`,
 * `access/<channel>/welcome/<user>.json`); poll offsets have no file yet (Telegram keeps its
 * own).
 */
export interface KeyValues {
  /** Key "": one per home. */
  "last-channel": LastChannelRecord;
  /** Key "": one list per home (thread ids carry their channel). */
  subscriptions: FollowedThread[];
  /** Key: the channel. How far a polling channel has confirmed its updates. */
  "poll-offset": number;
  /** Key: `<channel>/<user id>`. */
  welcome: Welcome;
}

export type KeyNamespace = keyof KeyValues;

export interface KeyValueStore {
  get<N extends KeyNamespace>(namespace: N, key: string): Promise<KeyValues[N] | undefined>;
  set<N extends KeyNamespace>(namespace: N, key: string, value: KeyValues[N]): Promise<void>;
  /** False when there was nothing under the key. */
  delete(namespace: KeyNamespace, key: string): Promise<boolean>;
  /** The keys of `namespace` starting with `prefix` and their values, any order. */
  list<N extends KeyNamespace>(
    namespace: N,
    prefix?: string,
  ): Promise<Array<{ key: string; value: KeyValues[N] }>>;
}

// ---------------------------------------------------------------------------------------------
// Who runs a thread now

/** What taking a lease gave: it, or who holds it. */
export type LeaseResult = { status: "taken"; release(): void } | { status: "held"; holder: string };

/**
 * A per-thread lease: one runner of a thread at a time across processes (the file backend: a
 * thread folder's `chat.lock` for `guppy chat`, `<home>/inbox.lock` for the gateway's whole
 * home). A holder that died lets go of it (a pid no longer alive, a lease not renewed).
 */
export interface ThreadLease {
  /** `holder` names the taker in messages (a pid, a gateway's name). */
  take(threadId: string, holder: string): LeaseResult;
  /** Who holds the thread's lease, if anyone alive does. */
  holder(threadId: string): string | undefined;
}

// ---------------------------------------------------------------------------------------------
// What changed: the feed SSE and the UI listen to

/**
 * A thread got a message in its log, or an event of its run: `Event` is the runtime's
 * (`OrchestratorEvent`), named by the layer above that publishes it.
 */
export type StateChange<Event = unknown> =
  | { kind: "message"; threadId: string; entry: LogEntry }
  | { kind: "event"; threadId: string; event: Event };

export interface ChangeFeed<Event = unknown> {
  publish(change: StateChange<Event>): void;
  /** Changes of `threadId` only, or of every thread; returns the unsubscribe. */
  subscribe(listener: (change: StateChange<Event>) => void, threadId?: string): () => void;
}

// ---------------------------------------------------------------------------------------------
// All of it

/** Everything guppy keeps, as one backend gives it (`Event`: see StateChange). */
export interface StateBackend<Event = unknown> {
  threadLog: ThreadLogReader & ThreadLogWriter;
  threads: ThreadRecords;
  inbox: InboxStore;
  usage: UsageLedger;
  eventSlots: EventSlotStore;
  access: AccessRecords;
  keyValues: KeyValueStore;
  lease: ThreadLease;
  changes: ChangeFeed<Event>;
}
