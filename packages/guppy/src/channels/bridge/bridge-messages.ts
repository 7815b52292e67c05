import { join } from "node:path";
import { type PromptContent, RESTART_NOTICE, type Role } from "@guppy/core";
import { ATTACHMENTS_DIR } from "@guppy/core/thread-layout";
import type { Message, SlashCommandEvent, Thread } from "chat";
import type { ChatUser } from "../../access/access-types.js";
import { runCommand } from "./bridge-commands.js";
import { type BridgeState, userOf } from "./bridge-state.js";
import { parseChatCommand } from "./chat-commands.js";
import { createChatThreadHandle } from "./chat-thread-handle.js";
import { planAttachmentDownloads } from "./download-attachments.js";

/**
 * One incoming message. The channel may acknowledge it once this resolves (Telegram confirms the
 * update then: `telegram/telegram-intake.ts`), so it resolves as soon as the prompt is in the
 * durable inbox or the command has acted — replies, and commands that wait for a running turn,
 * go on behind it.
 */
export async function handleMessage(
  state: BridgeState,
  thread: Thread,
  message: Message,
  addressed: boolean,
): Promise<void> {
  const { access, adapterName, logger, groupContext } = state.options;
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
    if (groupContext !== "per-user") state.groups.seen(thread.id, message, user);
    return;
  }
  const chat = thread.isDM ? "private" : "group";
  if (parsed) {
    const threadId = state.conversationOf(thread.id, user, chat === "group");
    runCommand(state, thread, threadId, user, parsed, message.id, chat, thread.id);
    return;
  }
  const decision = access.check(adapterName, user, chat);
  if (decision.kind !== "allow") {
    if (decision.reply) state.say(thread, decision.reply);
    return;
  }
  // The group's history is the shared conversation's: a member's own one is not given it.
  if (!thread.isDM && groupContext !== "per-user") await state.groups.catchUp(thread, message);
  sendPrompt(state, thread, message, user, decision.role);
}

/** A platform slash command: a chat message on Telegram, a command of its channel elsewhere. */
export async function handleSlashCommand(
  state: BridgeState,
  event: SlashCommandEvent,
): Promise<void> {
  const { access, adapterName, groupReplies } = state.options;
  if (event.user.isMe) return;
  const message = slashCommandMessage(event);
  if (message) {
    // Telegram: the command is a chat message, handled as one — guppy's commands run, any
    // other `/word` is text for the model (addressed like any message: in a group, by
    // naming the bot, `/word@bot`, or a reply to it).
    const thread = state.chat.thread(message.threadId);
    const named = /^\/\S+@/.test(message.text.trim());
    return handleMessage(
      state,
      thread,
      message,
      thread.isDM || named || groupReplies === "all" || message.replyTo?.author.isMe === true,
    );
  }
  const parsed = parseChatCommand(`${event.command} ${event.text}`, event.adapter.userName);
  const name = event.user.userName || event.user.fullName;
  const user = { id: event.user.userId, ...(name ? { name } : {}) };
  const chatKind = event.adapter.isDM?.(event.channel.id) ? "private" : "group";
  if (parsed?.kind === "command") {
    const platformThreadId = state.lastThreadInChannel.get(event.channel.id) ?? event.channel.id;
    const threadId = state.conversationOf(platformThreadId, user, chatKind === "group");
    runCommand(state, event.channel, threadId, user, parsed, undefined, chatKind, platformThreadId);
    return;
  }
  // A platform command registered for the app that is not guppy's (Slack, Discord): said so.
  const decision = access.check(adapterName, user, chatKind);
  if (decision.kind !== "allow") {
    if (decision.reply) state.say(event.channel, decision.reply);
    return;
  }
  state.say(event.channel, `Unknown command ${event.command}; /help lists the commands.`);
}

/**
 * Sends a prompt; it is in the durable inbox when this returns. Attachments are downloaded
 * behind it: the prompt is saved with the paths they go to, keeps its place in the thread's
 * queue while they download, and runs with them (see `content` of a prompt).
 */
function sendPrompt(
  state: BridgeState,
  thread: Thread,
  message: Message,
  user: ChatUser,
  role: Role,
): void {
  const { options } = state;
  const { logger, reply } = options;
  const threadId = state.conversationOf(thread.id, user, !thread.isDM);
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
  state.lastThreadInChannel.set(thread.channelId, thread.id);
  const handle = createChatThreadHandle(threadId, thread, reply, logger, user.id);
  const result = options.orchestrator.send(threadId, {
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
    if (!thread.isDM) follow(state, thread);
    state.awaitAnswer(handle);
  }
  if (result.status === "duplicate") {
    logger.debug("channel: dropped a message delivered again", { threadId, id: message.id });
  }
  if (result.status === "refused" && result.shuttingDown && options.refusedAtShutdown?.(message)) {
    state.say(thread, RESTART_NOTICE);
  } else if (result.status === "refused" || result.status === "dropped") {
    state.say(thread, `Not accepted: ${result.reason}`);
  }
}

/** Follows a group thread whose prompt was accepted (once; on a platform that follows threads). */
function follow(state: BridgeState, thread: Thread): void {
  const { follows, logger } = state.options;
  if (!follows || follows.isFollowed(thread.id)) return;
  state.track(
    thread.subscribe().then(
      () => logger.info("channel: following a thread", { threadId: thread.id }),
      (error: unknown) =>
        logger.warn("channel: could not follow a thread", {
          threadId: thread.id,
          error: String(error),
        }),
    ),
  );
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
