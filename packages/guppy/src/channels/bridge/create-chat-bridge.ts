import { join } from "node:path";
import {
  type ChannelLink,
  type Logger,
  type Orchestrator,
  type PromptContent,
  RESTART_NOTICE,
  type Role,
  type Store,
} from "@guppy/core";
import { ATTACHMENTS_DIR, memberOf, memberThreadId } from "@guppy/core/thread-layout";
import type { Chat, Message, SlashCommandEvent, Thread } from "chat";
import type { ChatUser, GroupContext, GroupReplies } from "../../access/access-types.js";
import type { AccessControl } from "../../access/create-access-control.js";
import { acknowledge } from "./acknowledge.js";
import {
  helpText,
  type ParsedCommand,
  parseChatCommand,
  runThreadCommand,
} from "./chat-commands.js";
import {
  type ChatThreadHandle,
  createChatThreadHandle,
  postSplit,
  type ReplySettings,
} from "./chat-thread-handle.js";
import { planAttachmentDownloads } from "./download-attachments.js";
import { createGroupHistory } from "./group-history.js";
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
type Postable = Pick<Thread, "post" | "id">;

function userOf(message: Message): ChatUser {
  const name = message.author.userName || message.author.fullName;
  return { id: message.author.userId, ...(name ? { name } : {}) };
}

/**
 * Wires a Chat SDK instance to the orchestrator: every message passes the access check first
 * (zero LLM calls for strangers), commands are answered here, prompts go to `orchestrator.send`
 * with a ThreadHandle that streams the reply back.
 */
// Long by design: the handlers registered on the Chat instance share access, commands and posts.
export function createChatBridge(chat: Chat, options: ChatBridgeOptions): ChatBridge {
  const { adapterName, orchestrator, access, logger, reply } = options;
  const pending = new Set<Promise<unknown>>();
  /** Handles of accepted prompts whose run has not ended: their answers are still to come. */
  const awaitingAnswer = new Set<ChatThreadHandle>();
  const posts = createThreadPosts();
  const groups = createGroupHistory({
    adapterName,
    store: options.store,
    access,
    logger,
    limit: options.backfillMessages ?? 50,
    listsHistory: options.listsHistory ?? false,
  });
  /**
   * A platform slash command names a channel, not a thread (Slack: `slack:C123`, while its threads
   * are `slack:C123:<ts>`): it applies to the thread that last got a prompt in that channel.
   */
  const lastThreadInChannel = new Map<string, string>();
  /** Member threads (per-user) made in this process → the chat thread they are posted to. */
  const chatThreadOf = new Map<string, string>();
  /**
   * Whose conversation a message of `user` in `platformThreadId` is: the thread's own, or in a
   * group under GUPPY_GROUP_CONTEXT=per-user the member's (`<thread>~u<user>`).
   */
  const conversationOf = (platformThreadId: string, user: ChatUser, group: boolean): string => {
    if (options.groupContext !== "per-user" || !group) return platformThreadId;
    const id = memberThreadId(platformThreadId, user.id);
    chatThreadOf.set(id, platformThreadId);
    return id;
  };
  /**
   * The chat thread a conversation posts to. A member's thread made before this start is known
   * by its id only: the group's canonical id, whose "default" filler Chat SDK ids never spell.
   */
  const chatThreadFor = (threadId: string): string => {
    const known = chatThreadOf.get(threadId);
    if (known) return known;
    const member = memberOf(threadId);
    return member ? member.groupId.replace(/:default$/, "") : threadId;
  };
  const track = <T>(p: Promise<T>): Promise<T> => {
    pending.add(p);
    void p.finally(() => pending.delete(p)).catch(() => {});
    return p;
  };

  /**
   * Posts `text` to `where` after the thread's earlier posts, off the intake path: the channel's
   * handler does not wait for it (a 429 on one chat must not hold up every chat's messages).
   */
  const say = (where: Postable, text: string | Promise<string | undefined>, to?: string): void => {
    const posted = Promise.resolve(text).then((ready) =>
      ready === undefined
        ? undefined
        : posts.post(where.id, async () => {
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
    track(posted);
  };

  /**
   * A command from a slash-command event or a message. Whatever it does to the thread is done
   * (or, for /new and /compact, queued behind the running turn) before this returns; its reply
   * is posted when it is ready, without holding up the channel.
   */
  const command = (
    where: Postable,
    threadId: string,
    user: ChatUser,
    name: Extract<ParsedCommand, { kind: "command" }>,
    messageId: string | undefined,
    chat: "private" | "group",
    /** The chat thread the command came from (its follow ends at `/new`). */
    platformThreadId: string = threadId,
  ): void => {
    if (name.command === "start" && name.args) {
      const decision = access.redeemInvite(adapterName, user, name.args);
      if (decision.kind === "allow")
        say(where, `Welcome! You can talk to me now.\n\n${helpText()}`);
      else if (decision.kind === "refuse" && decision.reply) say(where, decision.reply);
      return;
    }
    const decision = access.check(adapterName, user, chat);
    if (decision.kind !== "allow") {
      if (decision.reply) say(where, decision.reply);
      return;
    }
    if (name.command === "start") say(where, `Hi! Send me a message to start.\n\n${helpText()}`);
    else if (name.command === "help") say(where, helpText());
    else {
      // A fresh conversation: the thread is no longer followed (its next mention follows it
      // again). A member's own /new (per-user) leaves the others' conversations followed.
      if (name.command === "new" && threadId === platformThreadId) unfollow(platformThreadId);
      const to = name.command === "stop" || name.command === "steer" ? user.id : undefined;
      const ack = (text: string) => say(where, text, to);
      say(
        where,
        runThreadCommand(orchestrator, threadId, name.command, name.args, {
          role: decision.role,
          ...(messageId ? { messageId } : {}),
          ...(to ? { thread: { threadId, notice: ack, acknowledge: ack } } : {}),
        }),
        to,
      );
    }
  };

  /**
   * Sends a prompt; it is in the durable inbox when this returns. Attachments are downloaded
   * behind it: the prompt is saved with the paths they go to, keeps its place in the thread's
   * queue while they download, and runs with them (see `content` of a prompt).
   */
  const prompt = (thread: Thread, message: Message, user: ChatUser, role: Role): void => {
    const threadId = conversationOf(thread.id, user, !thread.isDM);
    const downloads =
      message.attachments.length > 0
        ? planAttachmentDownloads(
            message.text,
            message.attachments,
            join(options.store.threadDir(threadId), ATTACHMENTS_DIR),
            logger,
            options.attachmentWaitMs ?? 15_000,
          )
        : undefined;
    // The downloads start only once the prompt is accepted (not for a busy or refused one).
    let begin = () => {};
    const content =
      downloads &&
      new Promise<PromptContent>((resolve) => {
        begin = () => resolve(downloads.run());
      });
    lastThreadInChannel.set(thread.channelId, thread.id);
    const handle = createChatThreadHandle(threadId, thread, reply, logger, user.id);
    const result = orchestrator.send(threadId, {
      type: "prompt",
      text: downloads?.savedText ?? message.text,
      ...(content ? { content } : {}),
      thread: handle,
      messageId: message.id,
      userId: user.id,
      ...(user.name ? { userName: user.name } : {}),
      // What access control admitted the sender as: the run gets that role's tool set.
      role,
    });
    if (result.status === "queued") {
      begin();
      if (!thread.isDM) follow(thread);
      awaitingAnswer.add(handle);
      void handle.ended.then(() => {
        awaitingAnswer.delete(handle);
        track(handle.idle());
      });
    }
    if (result.status === "duplicate") {
      logger.debug("channel: dropped a message delivered again", { threadId, id: message.id });
    }
    if (
      result.status === "refused" &&
      result.shuttingDown &&
      options.refusedAtShutdown?.(message)
    ) {
      say(thread, RESTART_NOTICE);
    } else if (result.status === "refused" || result.status === "dropped") {
      say(thread, `Not accepted: ${result.reason}`);
    }
  };

  /** Follows a group thread whose prompt was accepted (once; on a platform that follows threads). */
  const follow = (thread: Thread): void => {
    const { follows } = options;
    if (!follows || follows.isFollowed(thread.id)) return;
    track(
      thread.subscribe().then(
        () => logger.info("channel: following a thread", { threadId: thread.id }),
        (error: unknown) =>
          logger.warn("channel: could not follow a thread", {
            threadId: thread.id,
            error: String(error),
          }),
      ),
    );
  };
  const unfollow = (platformThreadId: string): void => {
    const { follows } = options;
    if (!follows?.isFollowed(platformThreadId)) return;
    track(
      chat
        .thread(platformThreadId)
        .unsubscribe()
        .then(
          () => logger.info("channel: stopped following a thread", { threadId: platformThreadId }),
          () => {},
        ),
    );
  };

  /**
   * One incoming message. The channel may acknowledge it once this resolves (Telegram confirms the
   * update then: `telegram/telegram-intake.ts`), so it resolves as soon as the prompt is in the
   * durable inbox or the command has acted — replies, and commands that wait for a running turn,
   * go on behind it.
   */
  const onMessage = async (thread: Thread, message: Message, addressed: boolean) =>
    handleMessage(thread, message, addressed);

  const handleMessage = async (
    thread: Thread,
    message: Message,
    addressed: boolean,
  ): Promise<void> => {
    if (message.author.isMe || message.author.isBot === true) return;
    if (message.metadata.edited) {
      // Telegram hands an edit of an earlier message over like a new one: not a new prompt.
      logger.debug("channel: ignored an edit of an earlier message", { threadId: thread.id });
      return;
    }
    if (message.text.trim() === "" && message.attachments.length === 0) {
      // A service message (a member joined, a message was pinned, the title changed): no prompt.
      logger.debug("channel: ignored a message with no text and no attachment", {
        threadId: thread.id,
      });
      return;
    }
    const user = userOf(message);
    const parsed = parseChatCommand(message.text, thread.adapter.userName);
    if (parsed?.kind === "other-bot") {
      // Another bot's command (Telegram groups): neither a command nor a prompt for guppy.
      logger.debug("channel: ignored a command for another bot", { threadId: thread.id });
      return;
    }
    if (!addressed && !parsed) {
      access.logRefusal(adapterName, user, "group-not-addressed", thread.id);
      // Not run, but seen: the next run is given it (when its sender may be context). Per-user,
      // no member's conversation is the group's: nothing would be given it.
      if (options.groupContext !== "per-user") groups.seen(thread.id, message, user);
      return;
    }
    const chat = thread.isDM ? "private" : "group";
    if (parsed) {
      const threadId = conversationOf(thread.id, user, chat === "group");
      command(thread, threadId, user, parsed, message.id, chat, thread.id);
      return;
    }
    const decision = access.check(adapterName, user, chat);
    if (decision.kind !== "allow") {
      if (decision.reply) say(thread, decision.reply);
      return;
    }
    // The group's history is the shared conversation's: a member's own one is not given it.
    if (!thread.isDM && options.groupContext !== "per-user") await groups.catchUp(thread, message);
    prompt(thread, message, user, decision.role);
  };

  const guard = (fn: () => Promise<void>): Promise<void> =>
    track(
      fn().catch((error: unknown) => {
        logger.error("channel: message handling failed", {
          channel: adapterName,
          error: String(error),
        });
      }),
    );

  chat.onDirectMessage((thread, message) => guard(() => onMessage(thread, message, true)));
  chat.onNewMention((thread, message) => guard(() => onMessage(thread, message, true)));
  // A followed thread (see `follow`): every message there is for guppy; each starts its quiet
  // period (GUPPY_THREAD_FOLLOW_HOURS) again.
  chat.onSubscribedMessage((thread, message) =>
    guard(() => {
      options.follows?.touch(thread.id);
      return onMessage(thread, message, true);
    }),
  );
  chat.onNewMessage(/[\s\S]*/, (thread, message) =>
    guard(() =>
      onMessage(
        thread,
        message,
        options.groupReplies === "all" || message.replyTo?.author.isMe === true,
      ),
    ),
  );
  chat.onSlashCommand((event) =>
    guard(async () => {
      if (event.user.isMe) return;
      const message = slashCommandMessage(event);
      if (message) {
        // Telegram: the command is a chat message, handled as one — guppy's commands run, any
        // other `/word` is text for the model (addressed like any message: in a group, by
        // naming the bot, `/word@bot`, or a reply to it).
        const thread = chat.thread(message.threadId);
        const named = /^\/\S+@/.test(message.text.trim());
        return onMessage(
          thread,
          message,
          thread.isDM ||
            named ||
            options.groupReplies === "all" ||
            message.replyTo?.author.isMe === true,
        );
      }
      const parsed = parseChatCommand(`${event.command} ${event.text}`, event.adapter.userName);
      const name = event.user.userName || event.user.fullName;
      const user = { id: event.user.userId, ...(name ? { name } : {}) };
      const chatKind = event.adapter.isDM?.(event.channel.id) ? "private" : "group";
      if (parsed?.kind === "command") {
        const platformThreadId = lastThreadInChannel.get(event.channel.id) ?? event.channel.id;
        const threadId = conversationOf(platformThreadId, user, chatKind === "group");
        command(event.channel, threadId, user, parsed, undefined, chatKind, platformThreadId);
        return;
      }
      // A platform command registered for the app that is not guppy's (Slack, Discord): said so.
      const decision = access.check(adapterName, user, chatKind);
      if (decision.kind !== "allow") {
        if (decision.reply) say(event.channel, decision.reply);
        return;
      }
      say(event.channel, `Unknown command ${event.command}; /help lists the commands.`);
    }),
  );

  const link: ChannelLink = {
    adapterId: adapterName,
    threadHandle: (threadId) =>
      createChatThreadHandle(threadId, chat.thread(chatThreadFor(threadId)), reply, logger),
    postToChannel: async (channelId, text) => {
      // The Chat SDK names a channel with its adapter ("telegram:1001"); an event file and
      // send_message name it without (adapterId "telegram", channelId "1001").
      const id = channelId.startsWith(`${adapterName}:`)
        ? channelId
        : `${adapterName}:${channelId}`;
      const sent = await chat.channel(id).post({ markdown: text });
      return sent.threadId;
    },
  };
  orchestrator.registerChannel(link);

  return {
    async idle() {
      // A run that ended just now may still be posting its answer: wait for those posts too.
      await Promise.allSettled([...awaitingAnswer].map((h) => h.idle()));
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
  };
}

/**
 * The bridge's own posts (command replies, access replies, "not accepted"), one at a time per
 * chat thread and in the order they were asked for — never on the channel's intake path: a post
 * waiting out a 429 holds back only the later posts of its own thread.
 */
interface ThreadPosts {
  /** Runs `send` after the thread's earlier posts; resolves when it is done (never rejects). */
  post(threadId: string, send: () => Promise<void>): Promise<void>;
}

function createThreadPosts(): ThreadPosts {
  const chains = new Map<string, Promise<void>>();
  return {
    post(threadId, send) {
      const next = (chains.get(threadId) ?? Promise.resolve()).then(send).catch(() => {});
      chains.set(threadId, next);
      void next.then(() => {
        if (chains.get(threadId) === next) chains.delete(threadId);
      });
      return next;
    },
  };
}

/**
 * The chat message a slash command came in, as its adapter parses messages — when there is one:
 * a Telegram command is an ordinary message (`raw` is the Bot API message, with its id, text and
 * attachments); Slack's and Discord's commands are not messages (undefined).
 */
function slashCommandMessage(event: SlashCommandEvent): Message | undefined {
  const raw = event.raw as { message_id?: unknown; chat?: { id?: unknown } } | null | undefined;
  if (typeof raw?.message_id !== "number" || typeof raw.chat?.id !== "number") return undefined;
  try {
    return event.adapter.parseMessage(raw);
  } catch {
    return undefined;
  }
}
