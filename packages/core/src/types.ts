/**
 * The vocabulary shared by core's folders and layers: usage and context figures, the runner's
 * events, a thread's handle and messages, and the orchestrator's contract. Types only: a
 * behaviour file imports its neighbours' types from here, never from their files. What one
 * folder (and the layers above it) alone uses is in that folder's `types.ts` (runner, context,
 * orchestrator, mcp, sandbox, events).
 */
import type { ImageContent, Usage } from "@mariozechner/pi-ai";

// ---------------------------------------------------------------- usage, context, compaction

/** Sums over a thread's assistant messages. */
export interface UsageTotals {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  cost: number;
  requests: number;
}

/**
 * Totals read from the usage ledger (`<home>/usage.jsonl`): `subscription` of the `requests` went
 * through a subscription's sign-in (OAuth), which spends nothing per token, so their cost is not
 * in `cost`.
 */
export interface LedgerTotals extends UsageTotals {
  subscription: number;
}

/** What `/status` shows from the ledger: the thread's total across `/new`, and today's of all threads. */
export interface ThreadUsage {
  /** Every request of the thread and its subagents since its first, whatever `/new` archived. */
  thread: LedgerTotals;
  /** Every request of every thread today (local day, GUPPY_TIMEZONE). */
  today: LedgerTotals;
}

/** "summary": an LLM summary replaced the older part; "dropped": the fallback dropped whole turns. */
export type CompactionMethod = "summary" | "dropped";

/** Why a compaction ran: over the threshold, forced by /compact, or a provider's "context too long". */
export type CompactionReason = "threshold" | "manual" | "overflow";

export interface CompactionInfo {
  method: CompactionMethod;
  reason: CompactionReason;
  removedMessages: number;
  tokensBefore: number;
  tokensAfter: number;
  at: number;
  /** Why the summary failed, for a fallback. */
  error?: string;
}

/** What /status and the runner's events report about the context. */
export interface ContextStats {
  /** Tokens the last assembled request carried (or the current context, before any request). */
  tokens: number;
  /** Whether `tokens` rests on the provider's reported usage (else on the local count). */
  fromUsage: boolean;
  window: number;
  /** The most a request may carry. */
  inputBudget: number;
  /** Where compaction starts. */
  compactAt: number;
  /** Messages in what is sent (a compaction summary counts as one). */
  messages: number;
  compactions: number;
  /** Compactions that fell back to dropping turns because the summary request failed. */
  fallbacks: number;
  lastCompaction?: CompactionInfo;
}

// ---------------------------------------------------------------- the runner

/** Why a run ended. */
export type RunStopReason = "stop" | "length" | "aborted" | "error" | "max_tool_rounds";

/** What the runner reports while it works; UIs subscribe to these and know nothing else of the agent. */
export type RunnerEvent =
  | { type: "run_start"; threadId: string; text: string }
  /** A request to the model is under way (spinner on). */
  | { type: "thinking_start" }
  /** The model started answering, or the request ended (spinner off). */
  | { type: "thinking_end" }
  | { type: "text_delta"; delta: string }
  | { type: "tool_call"; toolCallId: string; name: string; args: unknown }
  | { type: "tool_result"; toolCallId: string; name: string; isError: boolean; text: string }
  /**
   * A running tool's output so far (bash): its last lines (at most TOOL_OUTPUT_LINES, the whole
   * text replacing the last one shown), at most a few a second; its `tool_result` follows.
   */
  | { type: "tool_output"; toolCallId: string; name: string; text: string }
  | { type: "usage"; usage: Usage; totals: UsageTotals }
  /** Before each request: what it carries (tokens / window, messages, compactions so far). */
  | { type: "context"; stats: ContextStats }
  /** The context was compacted ("dropped": the summary failed and whole oldest turns went). */
  | {
      type: "compaction";
      method: CompactionMethod;
      reason: CompactionReason;
      removedMessages: number;
      tokensBefore: number;
      tokensAfter: number;
    }
  | { type: "error"; kind: "provider" | "tool_rounds" | "internal"; message: string }
  /**
   * `quiet`: a heartbeat run with nothing for the user (`HEARTBEAT_OK`, or it failed): its text is
   * empty, nothing of it was kept, and no channel shows anything for it.
   */
  | {
      type: "run_end";
      text: string;
      stopReason: RunStopReason;
      errorMessage?: string;
      quiet?: true;
      /**
       * The final answer was posted already, by the run's last `send_message` to its own thread
       * with the same text: a channel does not post it again (nor is it logged twice).
       */
      delivered?: true;
    };

export interface RunnerStats {
  messages: number;
  /** Usage of the last request (its input is about the size of the context). */
  lastUsage?: Usage;
  /** Sums over every assistant message in the thread's context. */
  totals: UsageTotals;
  running: boolean;
  /** Tokens in context / window, messages sent, compactions so far. */
  context: ContextStats;
}

/** A thread's context and cost figures, as `/status` and `GET /v1/threads` show them. */
export interface ThreadFigures {
  messages: number;
  contextTokens: number;
  contextWindow: number;
  compactions: number;
  /** Of those, the ones that dropped old turns because the summary request failed. */
  compactionFallbacks?: number;
  /** Sums over the thread's requests. */
  cost: number;
  lastUsage?: Usage;
}

/** A thread's status.json: its figures as of its last deactivation, shutdown or reset. */
export interface SavedThreadStatus extends ThreadFigures {
  /** ISO time of the thread's last message or run end. */
  lastActivity: string;
}

// ---------------------------------------------------------------- threads and their messages

/**
 * How an actor talks back to the place a prompt came from. Every channel (terminal, HTTP API,
 * Telegram/Slack/Discord through Chat SDK) implements it; core never imports a chat SDK.
 */
export interface ThreadHandle {
  /** `adapter:channel:thread`. */
  readonly threadId: string;
  /**
   * Runner events of the run this handle's prompt started. Called synchronously inside the agent
   * loop: must not block — buffer slow I/O.
   */
  onEvent?(event: RunnerEvent): void;
  /** A short message from guppy itself (busy, interrupted run, nothing to steer). */
  notice(text: string): void | Promise<void>;
  /**
   * A short reply to the sender of this handle's message alone (busy, nothing to steer, a guest's
   * steer refused): where the channel can, only they see it (Slack: ephemeral). Absent: `notice`.
   */
  acknowledge?(text: string): void | Promise<void>;
  /**
   * Posts a file to the thread (the `upload` tool, which read `data` from the checked file);
   * absent where the channel cannot.
   */
  uploadFile?(file: { data: Buffer; filename: string }, comment?: string): Promise<void>;
  /**
   * Posts a message as guppy's to the thread, outside any answer (the `send_message` tool: progress
   * while a run goes on, a message from another thread's run). Absent: `notice` takes it.
   */
  post?(text: string): void | Promise<void>;
  /**
   * The chat platform's history of the thread and of its channel, newest first (`search_channel`
   * searches it with guppy's logs); absent where the channel cannot list it (HTTP, the terminal).
   */
  history?: PlatformHistory;
}

// ---------------------------------------------------------------- a chat platform's history

// Core never sees a chat SDK: the app hands a platform's messages over as PlatformMessage.

/** How far a search reaches: the thread it runs in, or every thread of that thread's channel. */
export type SearchScope = "thread" | "channel";

/** One message of a chat platform's history, as the app hands it to the search. */
export interface PlatformMessage {
  /** The platform's message id: a log.jsonl line of a prompt has the same `messageId`. */
  id: string;
  /** The guppy thread id it belongs to (`slack:C123:1700000000.000100`). */
  threadId: string;
  date: Date;
  /** Who wrote it, as people read it (a user name, else an id). */
  author: string;
  text: string;
  /** Written by guppy itself: its own log has these words already. */
  isMe: boolean;
}

/**
 * A chat platform's history of a thread (`scope` thread) or of the thread's whole channel,
 * newest first; pages are fetched only as the search reads on. Stops when `signal` aborts.
 */
export type PlatformHistory = (
  scope: SearchScope,
  signal?: AbortSignal,
) => AsyncIterable<PlatformMessage>;

/**
 * What a sender may have guppy do: an `owner` gets every tool the policy allows; a `guest` the
 * guest tool set (read-only by default). The terminal and the HTTP API act as owner.
 */
export type Role = "owner" | "guest";

/**
 * Where a prompt came from when no person typed it: a scheduled event (its file's name; `late`:
 * its time passed while guppy was down), the heartbeat, or subagents' results handed back to
 * their parent (the children's ids). Absent: a person's message. Kept in the inbox with the
 * prompt, so a prompt replayed after a restart is still known for what it is.
 */
export type PromptOrigin =
  | { kind: "event"; name: string; late?: true }
  | { kind: "heartbeat" }
  | { kind: "subagent"; children: string[] };

/** Who sent a prompt, for log.jsonl and access decisions already taken by the channel. */
export interface PromptSender {
  messageId?: string;
  userId?: string;
  userName?: string;
  /** The sender's role (default: owner); its run gets that role's tools. */
  role?: Role;
  /** Set for a prompt guppy itself sends (an event, the heartbeat, subagent results). */
  origin?: PromptOrigin;
}

/** A prompt's text and images as its run gets them (see `ActorMessage.content`). */
export interface PromptContent {
  text: string;
  images?: ImageContent[];
}

/**
 * What the orchestrator routes to a thread's actor: prompts queue; steer and abort bypass.
 * `messageId`: the channel's id of the message — one the thread has accepted already (a message
 * delivered again) is dropped, whatever its type.
 */
export type ActorMessage =
  | ({
      type: "prompt";
      text: string;
      images?: ImageContent[];
      thread?: ThreadHandle;
      /**
       * Default (false): `send` fsyncs the prompt before it returns "queued". True: `send` returns
       * once the line is written and fsyncs off the event loop; `SendResult.synced` resolves once
       * it is on disk — await it before acknowledging.
       */
      deferSync?: boolean;
      /**
       * The prompt's final text and images while the channel still fetches its attachments: `send`
       * saves `text` and `images` at once (what a run after a restart gets) and the prompt waits in
       * its place, holding no run slot, until this resolves, then runs with it. Should not reject;
       * if it does, the saved text runs.
       */
      content?: Promise<PromptContent>;
    } & PromptSender)
  | { type: "steer"; text: string; thread?: ThreadHandle; messageId?: string; role?: Role }
  | { type: "abort"; thread?: ThreadHandle; messageId?: string };

// ---------------------------------------------------------------- the orchestrator

/**
 * What `Orchestrator.send` did with a message. A prompt is on disk (the durable inbox) before
 * `send` returns "queued", so a channel may acknowledge it; "busy" means the thread's queue was
 * full and the sender has been told so.
 */
export type SendResult =
  | {
      status: "queued";
      inboxId: string;
      position: number;
      /** With `deferSync`: resolves once the prompt is fsync'd (rejects if that failed). */
      synced?: Promise<void>;
    }
  /** `queued`: the thread's prompts not running yet, as `ThreadStatus.queued` counts them. */
  | { status: "busy"; queued: number }
  /** The thread has accepted a message with this `messageId` already (a message delivered again). */
  | { status: "duplicate" }
  | { status: "delivered" }
  | { status: "dropped"; reason: string }
  /**
   * Not accepted. `shuttingDown`: because guppy is shutting down — a channel that keeps the
   * message on disk until it is accepted hands it over again after the restart. `heldElsewhere`:
   * another process runs the thread now (a `guppy chat` holds its session).
   */
  | {
      status: "refused";
      reason: string;
      shuttingDown?: true;
      heldElsewhere?: true;
      /** The prompt could not be written to the inbox (a full disk): nothing will run it. */
      unsaved?: true;
    };

/** What `/new` did: archived the context (its path, when there was one), or nothing (a duplicate). */
export type ResetResult = { status: "reset"; archived?: string } | { status: "duplicate" };

/** What `/compact` did: a one-line report of the compaction, or nothing (a duplicate). */
export type CompactResult = { status: "compacted"; report: string } | { status: "duplicate" };

/** A thread as `/status`, `GET /v1/threads` and the gateway's logs see it. */
export interface ThreadStatus extends ThreadFigures {
  threadId: string;
  /**
   * running: a run is under way; waiting: none is, and prompts wait (for a concurrency slot,
   * their attachments, a /compact, or — with a slot — the thread's files to open); idle: agent
   * loaded, nothing runs or waits; inactive: no agent loaded, nothing waits.
   */
  state: "inactive" | "idle" | "waiting" | "running";
  /**
   * Prompts accepted and not running yet (queued behind the run, or waiting for a slot or their
   * attachments): what GUPPY_QUEUE_DEPTH bounds, as a "busy" answer's `queued` counts them.
   */
  queued: number;
  /** ISO time of the last message or run end. */
  lastActivity?: string;
  model: string;
  /** The thread's subagents of this process (spawn, subagent tools), newest last; none: absent. */
  subagents?: SubagentInfo[];
  /**
   * Where the thread's tools run, in a short line (`bubblewrap (…)`, `host (…)`): set when the
   * app told the orchestrator, so `/status` shows whether a thread is confined.
   */
  sandbox?: string;
  /** The thread's scheduled events (`<home>/events/`), when the app told the orchestrator. */
  events?: ThreadEventInfo[];
  /** From the usage ledger, when the app told the orchestrator where it is. */
  usage?: ThreadUsage;
}

/** A scheduled event of a thread, as `/status` and `GET /v1/threads` show it. */
export interface ThreadEventInfo {
  id: string;
  type: "immediate" | "one-shot" | "periodic";
  schedule?: string;
  /** ISO time of its next firing. */
  nextRun?: string;
}

/** A subagent as its parent's status shows it. */
export interface SubagentInfo {
  /** Its thread id: the parent's with `~sub-<n>` added to the thread part. */
  id: string;
  label?: string;
  /** running; done (its answer is back, or on its way, to the parent); failed; aborted. */
  state: "running" | "done" | "failed" | "aborted";
}

/** Where `Orchestrator.postMessage` put a message, or why it could not. */
export type PostResult =
  | { status: "posted"; threadId: string }
  | { status: "failed"; reason: string };

/**
 * A channel as the orchestrator knows it: how to reach a thread when no live handle came with
 * the prompt (one replayed after a restart), and how to open a new thread (`sendToChannel`).
 */
export interface ChannelLink {
  /** The `adapter` part of thread ids this channel owns (`telegram`, `slack`, `http`, `cli`). */
  readonly adapterId: string;
  threadHandle(threadId: string): ThreadHandle;
  /** Posts a top-level message to a channel, creating a thread; resolves to its thread id. */
  postToChannel?(channelId: string, text: string): Promise<string>;
}

/** The single front door: every channel, the event bus and the CLI send through it. */
export interface Orchestrator {
  /**
   * Routes a message to the thread's actor, activating it on demand. Never throws. A message
   * whose `messageId` the thread has accepted before (a prompt pending, answered, or in its recent
   * log; a steer, abort, `/new` or `/compact` it acted on) is dropped as "duplicate", nobody told.
   * A steer or abort with a `messageId` is remembered whether or not something was running.
   */
  send(threadId: string, message: ActorMessage): SendResult;
  /**
   * Opens a thread in a channel with `text` and runs it as a prompt; resolves to the thread id.
   * `sender`: who the prompt is from (the event bus gives its origin and a message id).
   */
  sendToChannel(
    adapterId: string,
    channelId: string,
    text: string,
    sender?: PromptSender,
  ): Promise<string | undefined>;
  /**
   * Posts `text` as guppy's to a thread outside any run's answer (the `send_message` tool): to an
   * existing thread (`threadId`), or to a new one opened in a channel (`adapterId`, `channelId`,
   * through its link's `postToChannel`; nothing runs there). The message goes to the thread's
   * channel (its handle's `post`, else `notice`), its log.jsonl and the `message` event; `from`
   * (another thread's id) marks it for that thread's context as well (see LogEntry.sentFrom).
   */
  postMessage(
    target: { threadId: string } | { adapterId: string; channelId: string },
    text: string,
    from?: string,
  ): Promise<PostResult>;
  registerChannel(link: ChannelLink): void;
  /** A handle for `threadId` from its registered channel (the `upload` tool's), if one runs here. */
  threadHandle(threadId: string): ThreadHandle | undefined;
  /** `/new`: archives the thread's context once no run is active ("duplicate": done already). */
  reset(threadId: string, messageId?: string): Promise<ResetResult>;
  /** `/compact`: compacts the thread's context once no run is active; a one-line report. */
  compact(threadId: string, messageId?: string): Promise<CompactResult>;
  status(threadId: string): ThreadStatus;
  /**
   * Every thread known on disk or in memory. `onDisk: false`: the threads in memory only, without
   * listing the directories (a caller that lists them itself, off this thread: the HTTP API).
   */
  threads(options?: { onDisk?: boolean }): ThreadStatus[];
  /** Replays the durable inbox: accepted prompts that were never answered are run or reported. */
  start(): Promise<void>;
  /** Stops accepting prompts, lets running turns finish for up to `graceMs`, then aborts them and saves. */
  shutdown(graceMs: number): Promise<void>;
}
