import type { Logger, RunnerEvent } from "@guppy/core";
import { reopenAt } from "./markdown-scan.js";
import {
  classifySendError,
  defaultSleep,
  isNotModified,
  withRateLimitRetry,
} from "./rate-limit-retry.js";

/** A message guppy posted and may edit while the reply streams in. */
export interface ReplyMessage {
  edit(markdown: string): Promise<void>;
}

/** Where a reply goes: the Chat SDK thread, seen through the two calls the stream needs. */
export interface ReplyTarget {
  post(markdown: string): Promise<ReplyMessage>;
  /** `status` ("Running bash…"): shown where the platform's indicator takes one (Slack). */
  startTyping(status?: string): Promise<void>;
}

export interface ReplyStreamOptions {
  /** Splits a block's Markdown into parts that fit one platform message. */
  split(markdown: string): string[];
  /**
   * `edit`: the first text posts a message that is edited at most every `editIntervalMs` as text
   * arrives; `blocks`: one message per finished block (text between tool calls).
   */
  mode: "edit" | "blocks";
  editIntervalMs: number;
  /** Typing indicators expire (Telegram: 5 s); repeated this often while tools run. */
  typingIntervalMs: number;
  logger: Logger;
  /** Named in the log lines about this reply. */
  threadId?: string;
  sleep?: (ms: number) => Promise<void>;
}

export interface ReplyStream {
  /** Synchronous and non-blocking (called inside the agent loop); the I/O runs behind it. */
  onEvent(event: RunnerEvent): void;
  /** Resolves when everything received so far has been posted. */
  idle(): Promise<void>;
}

interface Block {
  /** Markdown reopening what the previous block left open (a continuation only), else "". */
  lead: string;
  text: string;
  sent: Array<{ message: ReplyMessage; text: string }>;
  final: boolean;
  /** The block's Markdown as of the last sync that put every part of it on screen. */
  shown: string;
  /** Nothing more is sent for it: its text goes on in the next block, or could not be delivered. */
  closed: boolean;
}

const newBlock = (text = "", lead = "", final = false): Block => ({
  lead,
  text,
  sent: [],
  final,
  shown: "",
  closed: false,
});

/** A sync that stopped at a failed platform call. */
class SyncFailure {
  constructor(
    readonly op: "post" | "edit",
    readonly error: unknown,
  ) {}
}

/**
 * Turns a run's events into chat messages: streamed edits at a bounded rate (or one message per
 * block), long text split across messages, a typing indicator while tools run. 429s are waited
 * out and transient failures retried (rate-limit-retry.ts). A reply is never cut short without a
 * word: when a message cannot be edited any more (the platform refuses, or keeps failing at the
 * end), the rest of the text follows in new messages; what cannot be posted at all is logged as
 * an error.
 */
// Long by design: one closure per reply whose methods share its posted messages and timers.
export function createReplyStream(target: ReplyTarget, options: ReplyStreamOptions): ReplyStream {
  const sleep = options.sleep ?? defaultSleep;
  const { logger, threadId } = options;
  const blocks: Block[] = [newBlock()];
  let lastSync = 0;
  let pumping: Promise<void> | undefined;
  let wake: (() => void) | undefined;
  let typingTimer: ReturnType<typeof setInterval> | undefined;
  let ended = false;
  let anyText = false;

  const current = (): Block => blocks[blocks.length - 1] as Block;

  // Splitting (with Telegram's MarkdownV2 measure) costs ~1 ms per KB: remember recent results.
  const splits = new Map<string, string[]>();
  const split = (text: string): string[] => {
    const known = splits.get(text);
    if (known) return known;
    if (splits.size > 16) splits.clear();
    const parts = options.split(text);
    splits.set(text, parts);
    return parts;
  };

  const retry = <T>(op: () => Promise<T>) => withRateLimitRetry(op, { sleep });

  /** What the typing indicator says: the running tool ("Running bash…"). */
  let typingStatus: string | undefined;
  const typing = (on: boolean, status?: string): void => {
    // Another tool while the indicator runs: it is told the new status at once.
    const renamed = on && typingTimer !== undefined && status !== typingStatus;
    typingStatus = status;
    if (renamed) {
      clearInterval(typingTimer);
      typingTimer = undefined;
    }
    if (on && !typingTimer && !ended) {
      const tick = () => {
        target.startTyping(typingStatus).catch((error: unknown) => {
          logger.debug("channel: typing indicator failed", { error: String(error) });
        });
      };
      tick();
      typingTimer = setInterval(tick, options.typingIntervalMs);
      typingTimer.unref?.();
    } else if (!on && typingTimer) {
      clearInterval(typingTimer);
      typingTimer = undefined;
    }
  };

  /** The lead and the text, without the whitespace the lead makes redundant; "" until text comes. */
  const contentOf = (b: Block): string => {
    const text = b.lead.endsWith("\n") ? b.text.replace(/^\n/, "") : b.text.trimStart();
    return text.trim() === "" ? "" : b.lead + text;
  };
  const markdownOf = (b: Block): string => contentOf(b).trimEnd();

  const needsSync = (b: Block): boolean => {
    if (b.closed) return false;
    const markdown = markdownOf(b);
    return (
      markdown !== "" && b.sent.map((s) => s.text).join("\u0000") !== split(markdown).join("\u0000")
    );
  };

  const dirty = (): boolean =>
    blocks.some((b) => (b.final || options.mode === "edit") && needsSync(b));

  const sync = async (block: Block): Promise<void> => {
    const markdown = markdownOf(block);
    const parts = split(markdown);
    // Laid out again in fewer messages than are on screen: the ones there keep what they show.
    if (parts.length < block.sent.length) return continueInNewBlock(block);
    for (let i = 0; i < parts.length; i++) {
      const text = parts[i] as string;
      const sent = block.sent[i];
      if (sent) {
        if (sent.text === text) continue;
        try {
          await retry(() => sent.message.edit(text));
        } catch (error) {
          if (!isNotModified(error)) throw new SyncFailure("edit", error);
        }
        sent.text = text;
      } else {
        let message: ReplyMessage;
        try {
          message = await retry(() => target.post(text));
        } catch (error) {
          throw new SyncFailure("post", error);
        }
        block.sent.push({ message, text });
      }
    }
    block.shown = markdown;
  };

  /**
   * Stops editing `block`'s messages, which show at least `block.shown`, and moves the rest of
   * its text (and whatever still streams in) to a new block posted as new messages.
   */
  const continueInNewBlock = (block: Block): void => {
    const content = contentOf(block);
    const next = newBlock(
      content.slice(block.shown.length),
      reopenAt(content, block.shown.length),
      block.final,
    );
    block.closed = true;
    blocks.splice(blocks.indexOf(block) + 1, 0, next);
  };

  const failed = (block: Block, failure: SyncFailure): void => {
    const kind = classifySendError(failure.error).kind;
    const fields = { threadId, error: String(failure.error) };
    if (failure.op === "edit" && (kind === "refused" || block.final)) {
      logger.warn(
        "channel: a reply message could not be edited; the rest follows in a new message",
        fields,
      );
      continueInNewBlock(block);
    } else if (!block.final) {
      // Still streaming: the next sync tries again.
      logger.warn(`channel: could not ${failure.op} a reply message; trying again`, fields);
    } else {
      block.closed = true;
      const total = markdownOf(block).length;
      const missing = total - block.shown.length;
      logger.error(
        `channel: a reply could not be delivered in full (up to ${missing} of ${total} characters missing)`,
        fields,
      );
    }
  };

  const pump = async (): Promise<void> => {
    while (dirty()) {
      const block = blocks.find((b) => b.final && needsSync(b)) ?? current();
      if (!block.final) {
        const wait = lastSync + options.editIntervalMs - Date.now();
        if (wait > 0) {
          await Promise.race([sleep(wait), new Promise<void>((r) => (wake = r))]);
          wake = undefined;
          continue;
        }
      }
      try {
        await sync(block);
      } catch (error) {
        failed(block, error instanceof SyncFailure ? error : new SyncFailure("post", error));
      }
      lastSync = Date.now();
    }
  };

  const kick = (): void => {
    wake?.();
    if (!pumping) {
      pumping = pump().finally(() => {
        pumping = undefined;
        if (dirty()) kick();
      });
    }
  };

  const finishBlock = (): void => {
    const block = current();
    if (markdownOf(block) !== "") {
      block.final = true;
      blocks.push(newBlock());
    }
  };

  const postNotice = (text: string): void => {
    blocks.push(newBlock(text, "", true), newBlock());
  };

  return {
    onEvent(event) {
      switch (event.type) {
        case "text_delta":
          typing(false);
          current().text += event.delta;
          anyText ||= event.delta.trim() !== "";
          if (options.mode === "edit") kick();
          break;
        case "tool_call":
          finishBlock();
          typing(true, `Running ${event.name}…`);
          kick();
          break;
        case "run_end":
          ended = true;
          typing(false);
          // A heartbeat with nothing for the user: nothing is posted, not even "(no reply)".
          if (event.quiet) break;
          if (event.delivered) {
            // The run posted this answer already (send_message): not a second time, where the
            // last block is not on screen yet.
            const last = current();
            if (last.sent.length === 0) last.text = "";
            anyText = true;
          }
          finishBlock();
          if (event.stopReason === "error")
            postNotice(`⚠️ ${event.errorMessage ?? "The model request failed."}`);
          else if (event.stopReason === "aborted") postNotice("⏹ Stopped.");
          else if (event.stopReason === "max_tool_rounds")
            postNotice("⚠️ Stopped: too many tool rounds in one run.");
          else if (!anyText) postNotice("(no reply)");
          kick();
          break;
        default:
          break;
      }
    },
    async idle() {
      while (pumping) await pumping;
    },
  };
}
