import { TelegramFormatConverter } from "@chat-adapter/telegram";

const converter = new TelegramFormatConverter();

/** Telegram's limit on a message's text, counted after formatting. */
export const TELEGRAM_MESSAGE_LIMIT = 4096;

/** Markdown as the Telegram adapter sends it (MarkdownV2, escaped); used to measure parts. */
export function renderTelegramMarkdown(markdown: string): string {
  return converter.fromAst(converter.toAst(markdown));
}
