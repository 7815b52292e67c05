import type { Logger, RunnerEvent } from "@guppy/core";
import { defaultSleep, withRateLimitRetry } from "./rate-limit-retry.js";

/** A message guppy posted and may edit while the reply streams in. */
export interface ReplyMessage {
  edit(markdown: string): Promise<void>;
}

/** Where a reply goes: the Chat SDK thread, seen through the two calls the stream needs. */
export interface ReplyTarget {
  post(markdown: string): Promise<ReplyMessage>;
  startTyping(): Promise<void>;
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
  sleep?: (ms: number) => Promise<void>;
}

export interface ReplyStream {
  /** Synchronous and non-blocking (called inside the agent loop); the I/O runs behind it. */
  onEvent(event: RunnerEvent): void;
  /** Resolves when everything received so far has been posted. */
  idle(): Promise<void>;
}

interface Block {
  text: string;
  sent: Array<{ message: ReplyMessage; text: string }>;
  final: boolean;
}

/**
 * Turns a run's events into chat messages: streamed edits at a bounded rate (or one message per
 * block), long text split across messages, a typing indicator while tools run, 429s waited out.
 */
export function createReplyStream(target: ReplyTarget, options: ReplyStreamOptions): ReplyStream {
  const sleep = options.sleep ?? defaultSleep;
  const blocks: Block[] = [{ text: "", sent: [], final: false }];
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

  const typing = (on: boolean): void => {
    if (on && !typingTimer && !ended) {
      const tick = () => {
        target.startTyping().catch((error: unknown) => {
          options.logger.debug("channel: typing indicator failed", { error: String(error) });
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

  const sync = async (block: Block): Promise<void> => {
    const parts = split(block.text.trim());
    for (let i = 0; i < parts.length; i++) {
      const text = parts[i] as string;
      const sent = block.sent[i];
      if (sent) {
        if (sent.text === text) continue;
        await retry(() => sent.message.edit(text));
        sent.text = text;
      } else {
        const message = await retry(() => target.post(text));
        block.sent.push({ message, text });
      }
    }
  };

  const dirty = (): boolean =>
    blocks.some(
      (b) =>
        (b.final || options.mode === "edit") &&
        b.text.trim() !== "" &&
        b.sent.map((s) => s.text).join("\u0000") !== split(b.text.trim()).join("\u0000"),
    );

  const pump = async (): Promise<void> => {
    while (dirty()) {
      const block =
        blocks.find((b) => b.final && b.text.trim() !== "" && needsSync(b)) ?? current();
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
        options.logger.warn("channel: could not post a reply", { error: String(error) });
        // A message that cannot be posted is not retried forever: mark what we have as sent.
        block.sent = split(block.text.trim()).map((text, i) => ({
          message: block.sent[i]?.message ?? { edit: async () => {} },
          text,
        }));
      }
      lastSync = Date.now();
    }
  };

  const needsSync = (b: Block): boolean =>
    b.sent.map((s) => s.text).join("\u0000") !== split(b.text.trim()).join("\u0000");

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
    if (block.text.trim() !== "") {
      block.final = true;
      blocks.push({ text: "", sent: [], final: false });
    }
  };

  const postNotice = (text: string): void => {
    blocks.push({ text, sent: [], final: true }, { text: "", sent: [], final: false });
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
          typing(true);
          kick();
          break;
        case "run_end":
          ended = true;
          typing(false);
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
