import type { Thread } from "chat";

/**
 * A short reply meant for the sender alone — "Stopping.", "Steering message sent.", "busy" —
 * posted so that only they see it where the platform can (Slack: an ephemeral message), and as
 * an ordinary post elsewhere (Discord and Telegram have no ephemeral messages in the Chat SDK;
 * a DM instead would answer in another place than the one the user wrote in). Without a sender
 * (`userId` undefined) it is an ordinary post, made by `post` (the caller's: split to the
 * platform's limit). Throws what the post throws.
 */
/** Where an acknowledgement goes: a thread or a channel (a slash command's). */
export type AckTarget = Pick<Thread, "post"> & { postEphemeral?: Thread["postEphemeral"] };

export async function acknowledge(
  where: AckTarget,
  userId: string | undefined,
  text: string,
  post: (text: string) => Promise<void>,
): Promise<void> {
  if (userId !== undefined && where.postEphemeral) {
    // `fallbackToDM: false`: null where the adapter has no ephemeral messages of its own.
    const sent = await where.postEphemeral(userId, { markdown: text }, { fallbackToDM: false });
    if (sent) return;
  }
  await post(text);
}
