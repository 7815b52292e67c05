/** The Bot API's root when GUPPY_TELEGRAM_API_URL is not set. */
export const TELEGRAM_API_DEFAULT = "https://api.telegram.org";

/**
 * A token's getMe answer; `refused`: the Bot API turned the token down (401, or 404 for a
 * malformed one), as against being unreachable or failing otherwise.
 */
export type BotCheck =
  | { ok: true; username: string }
  | { ok: false; problem: string; refused: boolean };

/**
 * Asks the Bot API who the token belongs to (getMe): a wrong token answers 401, a malformed one
 * 404 — the two the channel's start reports too (create-telegram-channel.ts). For `guppy setup`
 * and `guppy doctor`; no adapter is loaded. `apiUrl`:
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
      refused: false,
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
  const refused = response.status === 401 || response.status === 404;
  const hint = refused ? " (the bot token was refused: copy it again from @BotFather)" : "";
  return {
    ok: false,
    problem: `the Telegram Bot API at ${root} answered getMe: ${said}${hint}`,
    refused,
  };
}
