import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { errorText } from "../api/client.js";
import { signIn } from "../api/session.js";

/**
 * Sign-in with the API token. The token goes once in a POST body and comes back as an HttpOnly
 * cookie; the page does not keep it. Where it is stored is shown only to a browser on this
 * machine (the API tells `token_hint` to loopback clients only).
 */
export function LoginPage({
  tokenHint,
  onSignedIn,
}: {
  tokenHint: string | undefined;
  onSignedIn: () => void;
}) {
  const [token, setToken] = useState("");
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await signIn(token);
      setToken("");
      onSignedIn();
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };
  return html`
    <main class="center">
      <form class="card login" onSubmit=${submit} aria-labelledby="login-title">
        <h1 id="login-title">guppy</h1>
        <label for="token">API token</label>
        <input
          id="token"
          name="token"
          type="password"
          autocomplete="current-password"
          required
          value=${token}
          onInput=${(e: Event) => setToken((e.target as HTMLInputElement).value)}
        />
        ${tokenHint ? html`<p class="hint">The token: ${tokenHint}.</p>` : null}
        ${error ? html`<p class="error" role="alert">${error}</p>` : null}
        <button type="submit" disabled=${busy}>Sign in</button>
      </form>
    </main>
  `;
}
