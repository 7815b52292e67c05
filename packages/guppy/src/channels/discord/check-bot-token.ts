/** The REST API root the adapter uses when neither its `apiUrl` nor DISCORD_API_URL is set. */
export const DISCORD_API_DEFAULT = "https://discord.com/api/v10";

/** How long the check waits for Discord's answer. */
const CHECK_TIMEOUT_MS = 15_000;

function reason(error: unknown): string {
  const e = error as { message?: unknown; cause?: { message?: unknown } } | undefined;
  const cause = e?.cause?.message;
  return String(typeof cause === "string" && cause ? cause : (e?.message ?? error));
}

/**
 * Asks Discord whether it accepts the bot token (`GET /users/@me`): "refused" on 401, the answer
 * Discord gives a token it does not know (a wrong, reset or malformed one). Throws, naming the
 * problem, when it cannot tell: Discord unreachable, a timeout, or any other status (a 5xx, a 429
 * or the 403 of a blocked IP say nothing about the token).
 */
export async function checkBotToken(
  apiBaseUrl: string,
  token: string,
  signal?: AbortSignal,
): Promise<"accepted" | "refused"> {
  const url = `${apiBaseUrl}/users/@me`;
  const timeout = AbortSignal.timeout(CHECK_TIMEOUT_MS);
  let response: Response;
  let body: string;
  try {
    response = await fetch(url, {
      headers: { Authorization: `Bot ${token}` },
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    body = await response.text();
  } catch (error) {
    // Never the token itself, whatever the error quotes (a header it could not carry, say).
    const why = reason(error).split(token).join("****");
    throw new Error(`Could not reach Discord to check the bot token (GET ${url}): ${why}`);
  }
  if (response.status === 401) return "refused";
  if (response.ok) return "accepted";
  let message = "";
  try {
    const parsed = JSON.parse(body) as { message?: unknown };
    if (typeof parsed.message === "string") message = `: ${parsed.message}`;
  } catch {
    // not JSON (a proxy's page): the status says enough
  }
  const status = `${response.status} ${response.statusText}`.trim();
  throw new Error(`Discord answered the bot token check (GET ${url}) with ${status}${message}`);
}
