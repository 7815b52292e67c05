import type { ImageContent } from "@mariozechner/pi-ai";
import type { RunnerEvent } from "../runner/runner-events.js";

/**
 * How an actor talks back to the place a prompt came from. Every channel (terminal, HTTP API,
 * Telegram/Slack/Discord through Chat SDK) implements it; core never imports a chat SDK.
 */
export interface ThreadHandle {
  /** `adapter:channel:thread`. */
  readonly threadId: string;
  /**
   * Runner events of the run this handle's prompt started (text deltas, tool calls/results,
   * run_end, errors). Called synchronously inside the agent loop: must not block — buffer slow I/O.
   */
  onEvent?(event: RunnerEvent): void;
  /** A short message from guppy itself (busy, interrupted run, nothing to steer). */
  notice(text: string): void | Promise<void>;
  /** Posts a file from disk to the thread (the `upload` tool); absent where the channel cannot. */
  uploadFile?(path: string, comment?: string): Promise<void>;
}

/** Who sent a prompt, for log.jsonl and access decisions already taken by the channel. */
export interface PromptSender {
  messageId?: string;
  userId?: string;
  userName?: string;
}

/** A prompt's text and images as its run gets them (see `content` below). */
export interface PromptContent {
  text: string;
  images?: ImageContent[];
}

/**
 * What the orchestrator routes to a thread's actor (seed 002: prompt queues; steer and abort
 * bypass). `messageId`: the channel's id of the message it came in — one the thread has accepted
 * already (a message delivered again) is dropped, whatever its type.
 */
export type ActorMessage =
  | ({
      type: "prompt";
      text: string;
      images?: ImageContent[];
      thread?: ThreadHandle;
      /**
       * Default (false): `send` fsyncs the prompt before it returns "queued". True: `send` returns
       * once the line is written (it survives a killed process) and fsyncs off the event loop;
       * `SendResult.synced` resolves once it is on disk — await it before acknowledging.
       */
      deferSync?: boolean;
      /**
       * The prompt's final text and images while the channel still fetches part of them (its
       * attachments): `send` saves `text` and `images` at once — what a run after a restart gets,
       * as the fetch is lost — and the prompt waits in its place in the queue (the thread's later
       * prompts behind it, holding no run slot) until `content` resolves, then runs with that.
       * Should not reject; if it does, the saved text runs.
       */
      content?: Promise<PromptContent>;
    } & PromptSender)
  | { type: "steer"; text: string; thread?: ThreadHandle; messageId?: string }
  | { type: "abort"; thread?: ThreadHandle; messageId?: string };
