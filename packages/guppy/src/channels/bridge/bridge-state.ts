import type { Logger, Orchestrator, Store } from "@guppy/core";
import { memberOf, memberThreadId } from "@guppy/core/thread-layout";
import type { Chat, Message, Thread } from "chat";
import type { ChatUser, GroupContext, GroupReplies } from "../../access/access-types.js";
import type { AccessControl } from "../../access/create-access-control.js";
import { acknowledge } from "./acknowledge.js";
import { type ChatThreadHandle, postSplit, type ReplySettings } from "./chat-thread-handle.js";
import { createGroupHistory, type GroupHistory } from "./group-history.js";
import type { ThreadFollows } from "./thread-follows.js";

export interface ChatBridgeOptions {
  /** The adapter name: the `adapter` part of thread ids and the access channel name. */
  adapterName: string;
  orchestrator: Orchestrator;
  access: AccessControl;
  store: Store;
  logger: Logger;
  groupReplies: GroupReplies;
  /**
   * GUPPY_GROUP_CONTEXT: `per-user` gives each member of a group thread a conversation of their
   * own (`<thread>~u<user>`: own folder, own /new, own history); default `shared`.
   */
  groupContext?: GroupContext;
  reply: ReplySettings;
  /** How long a prompt waits for its attachments before it runs without the missing ones. */
  attachmentWaitMs?: number;
  /**
   * A prompt refused because guppy is shutting down: true when the channel hands the message over
   * again at its next start (Telegram: it is not confirmed, so Telegram sends it again). Its sender
   * is told it will be answered then, rather than "Not accepted".
   */
  refusedAtShutdown?: (message: Message) => boolean;
  /**
   * The threads guppy follows (Slack, Discord; the Chat SDK state adapter's subscriptions): a
   * group thread whose prompt was accepted is followed, so later messages there reach guppy
   * without a mention until `/new` or a quiet period. Absent: no thread is followed (Telegram).
   */
  follows?: ThreadFollows;
  /** GUPPY_GROUP_BACKFILL_MESSAGES: the most platform history fetched for a group thread. */
  backfillMessages?: number;
  /**
   * Whether the platform lists a thread's messages (Slack, Discord): a group thread's first
   * prompt in this process logs what the log lacks of them (said before guppy joined or while it
   * was down).
   */
  listsHistory?: boolean;
}

/** What a channel needs from the bridge after wiring. */
export interface ChatBridge {
  /** Resolves when every reply started so far has been posted (tests, shutdown). */
  idle(): Promise<void>;
}

/** A Chat SDK thread or channel: where commands and access replies are posted. */
export type Postable = Pick<Thread, "post" | "id">;

/** Who sent a chat message, as access control names users. */
export function userOf(message: Message): ChatUser {
  const name = message.author.userName || message.author.fullName;
  return { id: message.author.userId, ...(name ? { name } : {}) };
}

/**
 * What one chat bridge keeps while its channel runs: the posts and replies under way (what
 * `idle` waits for), the bridge's own posts in order per chat thread, and which conversation
 * posts to which chat thread. The steps (bridge-messages.ts, bridge-commands.ts) are plain
 * functions over it.
 */
export class BridgeState {
  readonly chat: Chat;
  readonly options: ChatBridgeOptions;
  readonly groups: GroupHistory;
  /**
   * A platform slash command names a channel, not a thread (Slack: `slack:C123`, while its threads
   * are `slack:C123:<ts>`): it applies to the thread that last got a prompt in that channel.
   */
  readonly lastThreadInChannel = new Map<string, string>();
  private readonly pending = new Set<Promise<unknown>>();
  /** Handles of accepted prompts whose run has not ended: their answers are still to come. */
  private readonly awaitingAnswer = new Set<ChatThreadHandle>();
  /** Member threads (per-user) made in this process → the chat thread they are posted to. */
  private readonly chatThreadOf = new Map<string, string>();
  /** Each chat thread's last post of the bridge's own (see `say`). */
  private readonly posts = new Map<string, Promise<void>>();

  constructor(chat: Chat, options: ChatBridgeOptions) {
    this.chat = chat;
    this.options = options;
    this.groups = createGroupHistory({
      adapterName: options.adapterName,
      store: options.store,
      access: options.access,
      logger: options.logger,
      limit: options.backfillMessages ?? 50,
      listsHistory: options.listsHistory ?? false,
    });
  }

  /** Keeps `p` until it settles: `idle` waits for it. */
  track<T>(p: Promise<T>): Promise<T> {
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p)).catch(() => {});
    return p;
  }

  /** An accepted prompt's handle: `idle` waits for its answer until its run ends, then its posts. */
  awaitAnswer(handle: ChatThreadHandle): void {
    this.awaitingAnswer.add(handle);
    void handle.ended.then(() => {
      this.awaitingAnswer.delete(handle);
      this.track(handle.idle());
    });
  }

  /**
   * Posts `text` to `where` after the thread's earlier posts, off the intake path: the channel's
   * handler does not wait for it (a 429 on one chat must not hold up every chat's messages).
   */
  say(where: Postable, text: string | Promise<string | undefined>, to?: string): void {
    const { logger, reply, adapterName } = this.options;
    const posted = Promise.resolve(text).then((ready) =>
      ready === undefined
        ? undefined
        : this.postInOrder(where.id, async () => {
            try {
              // `to`: an acknowledgement for that user alone where the platform can (acknowledge.ts).
              const post = (text: string) => postSplit(where as Thread, text, reply);
              await (to ? acknowledge(where, to, ready, post) : post(ready));
            } catch (error) {
              logger.warn("channel: could not post a reply", {
                channel: adapterName,
                error: String(error),
              });
            }
          }),
    );
    this.track(posted);
  }

  /**
   * Whose conversation a message of `user` in `platformThreadId` is: the thread's own, or in a
   * group under GUPPY_GROUP_CONTEXT=per-user the member's (`<thread>~u<user>`).
   */
  conversationOf(platformThreadId: string, user: ChatUser, group: boolean): string {
    if (this.options.groupContext !== "per-user" || !group) return platformThreadId;
    const id = memberThreadId(platformThreadId, user.id);
    this.chatThreadOf.set(id, platformThreadId);
    return id;
  }

  /**
   * The chat thread a conversation posts to. A member's thread made before this start is known
   * by its id only: the group's canonical id, whose "default" filler Chat SDK ids never spell.
   */
  chatThreadFor(threadId: string): string {
    const known = this.chatThreadOf.get(threadId);
    if (known) return known;
    const member = memberOf(threadId);
    return member ? member.groupId.replace(/:default$/, "") : threadId;
  }

  /** Resolves when every reply started so far has been posted. */
  async idle(): Promise<void> {
    // A run that ended just now may still be posting its answer: wait for those posts too.
    await Promise.allSettled([...this.awaitingAnswer].map((h) => h.idle()));
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /**
   * The bridge's own posts (command replies, access replies, "not accepted"), one at a time per
   * chat thread and in the order they were asked for — never on the channel's intake path: a post
   * waiting out a 429 holds back only the later posts of its own thread. Resolves when `send` is
   * done (never rejects).
   */
  private postInOrder(threadId: string, send: () => Promise<void>): Promise<void> {
    const next = (this.posts.get(threadId) ?? Promise.resolve()).then(send).catch(() => {});
    this.posts.set(threadId, next);
    void next.then(() => {
      if (this.posts.get(threadId) === next) this.posts.delete(threadId);
    });
    return next;
  }
}
