import type { Message, SlashCommandEvent } from "chat";

/**
 * The chat message a slash command came in, as its adapter parses messages — when there is one:
 * a Telegram command is an ordinary message (`raw` is the Bot API message, with its id, text and
 * attachments); Slack's and Discord's commands are not messages (undefined).
 */
export function slashCommandMessage(event: SlashCommandEvent): Message | undefined {
  const raw = event.raw as { message_id?: unknown; chat?: { id?: unknown } } | null | undefined;
  if (typeof raw?.message_id !== "number" || typeof raw.chat?.id !== "number") return undefined;
  try {
    return event.adapter.parseMessage(raw);
  } catch {
    return undefined;
  }
}
