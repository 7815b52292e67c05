/**
 * The Bot API's root (create-telegram-channel.ts has the same; importing it would load the
 * Telegram adapter for a setup that only asks getMe).
 */
const TELEGRAM_API_DEFAULT = "https://api.telegram.org";

export type BotCheck = { ok: true; username: string } | { ok: false; problem: string };

/**
 * Asks the Bot API who the token belongs to (getMe): a wrong token answers 401, a malformed one
 * 404 — the two the channel's start reports too (create-telegram-channel.ts). `apiUrl`:
 * GUPPY_TELEGRAM_API_URL (a self-hosted Bot API server or the tests' emulator).
 */
export async function checkBotToken(
  token: string,
  apiUrl: string = TELEGRAM_API_DEFAULT,
  timeoutMs = 15_000,
): Promise<BotCheck> {
  const root = apiUrl.replace(/\/+$/, "");
  let response: Response;
  try {
    response = await fetch(`${root}/bot${token}/getMe`, {
      method: "POST",
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    return {
      ok: false,
      problem: `cannot reach the Telegram Bot API at ${root}: ${cause ?? (error as Error).message}`,
    };
  }
  const body = (await response.json().catch(() => ({}))) as {
    ok?: boolean;
    description?: string;
    result?: { username?: string };
  };
  if (response.ok && body.ok === true && body.result?.username) {
    return { ok: true, username: body.result.username };
  }
  const said = `${response.status}${body.description ? ` ${body.description}` : ""}`;
  const hint =
    response.status === 401 || response.status === 404
      ? " (the bot token was refused: copy it again from @BotFather)"
      : "";
  return { ok: false, problem: `the Telegram Bot API at ${root} answered getMe: ${said}${hint}` };
}

/** What to do once the bot is set up: pair yourself as its owner. */
export function pairingSteps(username: string): string {
  return [
    `To talk to @${username}, pair yourself as its owner:`,
    "  1. guppy serve                         (keep it running)",
    `  2. send /start to @${username} in Telegram: it answers with a pairing code`,
    "  3. guppy pairing list telegram          (shows your request and its code)",
    "  4. guppy pairing approve telegram <code> --owner",
    "",
  ].join("\n");
}
