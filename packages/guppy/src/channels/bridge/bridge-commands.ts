import type { ChatUser } from "../../access/access-types.js";
import type { BridgeState, Postable } from "./bridge-state.js";
import { helpText, type ParsedCommand, runThreadCommand } from "./chat-commands.js";

/**
 * A command from a slash-command event or a message. Whatever it does to the thread is done
 * (or, for /new and /compact, queued behind the running turn) before this returns; its reply
 * is posted when it is ready, without holding up the channel.
 */
export function runCommand(
  state: BridgeState,
  where: Postable,
  threadId: string,
  user: ChatUser,
  name: Extract<ParsedCommand, { kind: "command" }>,
  messageId: string | undefined,
  chat: "private" | "group",
  /** The chat thread the command came from (its follow ends at `/new`). */
  platformThreadId: string = threadId,
): void {
  const { access, adapterName, orchestrator } = state.options;
  if (name.command === "start" && name.args) {
    const decision = access.redeemInvite(adapterName, user, name.args);
    if (decision.kind === "allow")
      state.say(where, `Welcome! You can talk to me now.\n\n${helpText()}`);
    else if (decision.kind === "refuse" && decision.reply) state.say(where, decision.reply);
    return;
  }
  const decision = access.check(adapterName, user, chat);
  if (decision.kind !== "allow") {
    if (decision.reply) state.say(where, decision.reply);
    return;
  }
  if (name.command === "start")
    state.say(where, `Hi! Send me a message to start.\n\n${helpText()}`);
  else if (name.command === "help") state.say(where, helpText());
  else {
    // A fresh conversation: the thread is no longer followed (its next mention follows it
    // again). A member's own /new (per-user) leaves the others' conversations followed.
    if (name.command === "new" && threadId === platformThreadId) unfollow(state, platformThreadId);
    const to = name.command === "stop" || name.command === "steer" ? user.id : undefined;
    const ack = (text: string) => state.say(where, text, to);
    state.say(
      where,
      runThreadCommand(orchestrator, threadId, name.command, name.args, {
        role: decision.role,
        ...(messageId ? { messageId } : {}),
        ...(to ? { thread: { threadId, notice: ack, acknowledge: ack } } : {}),
      }),
      to,
    );
  }
}

/** Stops following a chat thread (at its `/new`), when it is followed. */
function unfollow(state: BridgeState, platformThreadId: string): void {
  const { follows, logger } = state.options;
  if (!follows?.isFollowed(platformThreadId)) return;
  state.track(
    state.chat
      .thread(platformThreadId)
      .unsubscribe()
      .then(
        () => logger.info("channel: stopped following a thread", { threadId: platformThreadId }),
        () => {},
      ),
  );
}
