/** `scheme://userinfo@` in a text; the greedy userinfo ends at the authority's last "@", as URL parsers read it. */
const credentials = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/?#]*)@/gi;

/**
 * Masks the credentials of every URL in a text, for output and error lines:
 * `https://bob:hunter2@proxy.example/v1` → `https://bob:****@proxy.example/v1`. A user name
 * without a password is masked whole: it is often a token (`https://<token>@host`).
 */
export function maskUrlCredentials(text: string): string {
  return text.replace(credentials, (_, scheme: string, userinfo: string) => {
    const colon = userinfo.indexOf(":");
    return colon === -1 ? `${scheme}****@` : `${scheme}${userinfo.slice(0, colon)}:****@`;
  });
}
