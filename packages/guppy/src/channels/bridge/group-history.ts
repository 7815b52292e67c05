import { existsSync } from "node:fs";
import type { Logger, Store } from "@guppy/core";
import type { LogEntry } from "@guppy/core/thread-layout";
import type { Message, Thread } from "chat";
import type { ChatUser } from "../../access/access-types.js";
import type { AccessControl } from "../../access/create-access-control.js";
import { parseChatCommand } from "./chat-commands.js";

/** How long the platform's history may take before the prompt runs without it. */
const HISTORY_WAIT_MS = 10_000;

/**
 * What guppy sees of a group without being addressed (seed 002 "Backfill / Sync"): a message of
 * a user who may be context (admitted, or anyone under `open`) is written to the thread's
 * log.jsonl and not run; the orchestrator's backfill gives the next run what was said since the
 * last one (at most GUPPY_GROUP_BACKFILL_MESSAGES). Where the platform lists a thread's messages
 * (Slack, Discord), the first addressed message of a thread in this process fetches the newest of
 * them too: what was said before guppy joined, or while it was down.
 */
export interface GroupHistory {
  /**
   * A group message not addressed to guppy: logged when its sender may be context. Where the
   * platform lists history, only in a thread guppy has taken part in (it has a folder): a Slack
   * channel's every top-level message is a thread of its own, which would each get a folder; the
   * first mention in a thread fetches what was said there before instead (`catchUp`).
   */
  seen(threadId: string, message: Message, user: ChatUser): void;
  /**
   * Before the first prompt of a group thread in this process (later ones wait for the same
   * fetch, so prompts keep their order): the platform's newest messages that the log lacks are
   * logged, oldest first. Never rejects; at most `HISTORY_WAIT_MS` of waiting.
   */
  catchUp(thread: Thread, message: Message): Promise<void>;
}

export function createGroupHistory(options: {
  adapterName: string;
  store: Store;
  access: AccessControl;
  logger: Logger;
  /** GUPPY_GROUP_BACKFILL_MESSAGES: the most messages a run is given, so the most fetched. */
  limit: number;
  /** Whether the platform lists a thread's messages (Slack, Discord). */
  listsHistory: boolean;
}): GroupHistory {
  const { adapterName, store, access, logger, limit } = options;
  /** Group threads whose platform history this process has fetched (or is fetching). */
  const caughtUp = new Map<string, Promise<void>>();

  const mayBeContext = (message: Message) =>
    !message.author.isMe &&
    message.author.isBot !== true &&
    access.mayBeContext(adapterName, message.author.userId);

  const append = (threadId: string, message: Message) => {
    try {
      store.appendLog(threadId, logEntryOf(message));
    } catch (error) {
      logger.warn("channel: could not log a group message", { threadId, error: String(error) });
    }
  };

  const fetchMissing = async (thread: Thread, current: Message): Promise<void> => {
    const logged = new Set(store.readLog(thread.id).map((entry) => entry.messageId));
    const newestFirst: Message[] = [];
    let looked = 0;
    for await (const message of thread.messages) {
      if (looked++ >= limit + 1) break;
      if (message.id === current.id) continue;
      // A later message is handled by its own delivery.
      if (message.metadata.dateSent > current.metadata.dateSent) continue;
      if (logged.has(message.id) || !mayBeContext(message)) continue;
      if (message.text.trim() === "" && message.attachments.length === 0) continue;
      // A command (guppy's `/new`, another bot's) is not something said in the conversation.
      if (parseChatCommand(message.text, thread.adapter.userName)) continue;
      newestFirst.push(message);
    }
    for (const message of newestFirst.reverse()) append(thread.id, message);
    if (newestFirst.length > 0) {
      logger.info("channel: logged messages from the platform's history", {
        threadId: thread.id,
        count: newestFirst.length,
      });
    }
  };

  return {
    seen(threadId, message, user) {
      if (!mayBeContext(message)) return;
      if (options.listsHistory && !existsSync(store.threadDir(threadId))) return;
      append(threadId, message);
      logger.debug("channel: logged a group message not addressed to guppy", {
        threadId,
        userId: user.id,
      });
    },
    catchUp(thread, message) {
      if (!options.listsHistory || thread.isDM) return Promise.resolve();
      let done = caughtUp.get(thread.id);
      if (done === undefined) {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<void>((resolve) => {
          timer = setTimeout(() => {
            logger.warn("channel: the platform's history took too long; going on without it", {
              threadId: thread.id,
            });
            resolve();
          }, HISTORY_WAIT_MS);
        });
        const fetched = fetchMissing(thread, message).catch((error: unknown) => {
          logger.warn("channel: could not fetch the thread's history", {
            threadId: thread.id,
            error: String(error),
          });
        });
        done = Promise.race([fetched, timeout]).finally(() => clearTimeout(timer));
        caughtUp.set(thread.id, done);
      }
      return done;
    },
  };
}

/** A chat message as a log.jsonl line: when it was sent, by whom, its text and files' names. */
function logEntryOf(message: Message): LogEntry {
  const files = message.attachments.map((a) => a.name ?? a.type).filter(Boolean);
  const text = files.length > 0 ? `${message.text}\n[attached: ${files.join(", ")}]` : message.text;
  return {
    date: message.metadata.dateSent.toISOString(),
    messageId: message.id,
    userId: message.author.userId,
    userName: message.author.userName || message.author.fullName || message.author.userId,
    text: text.trim(),
    isBot: false,
  };
}
