import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { errorText, onSessionLost } from "./api/client.js";
import { type SessionState, sessionState, signOut } from "./api/session.js";
import { AccessPage } from "./pages/access-page.js";
import { ChatPage } from "./pages/chat/chat-page.js";
import { LoginPage } from "./pages/login-page.js";
import { SchedulesPage } from "./pages/schedules-page.js";
import { StatusPage } from "./pages/status-page.js";
import { UsagePage } from "./pages/usage-page.js";
import { type PageName, routeHref, useRoute } from "./router.js";

const NAV: Array<{ page: PageName; label: string }> = [
  { page: "chat", label: "Chat" },
  { page: "access", label: "Access" },
  { page: "schedules", label: "Schedules" },
  { page: "usage", label: "Usage" },
  { page: "status", label: "Status" },
];

/** The page: sign-in until the session cookie is set, then the navigation and one page. */
export function App() {
  const [session, setSession] = useState<SessionState | undefined>();
  const [failure, setFailure] = useState<string | undefined>();
  const check = () =>
    sessionState().then(
      (s) => {
        setSession(s);
        setFailure(undefined);
      },
      (e) => setFailure(errorText(e)),
    );
  useEffect(() => {
    onSessionLost(() => setSession({ authenticated: false }));
    check();
  }, []);
  if (failure) return html`<main class="center"><p role="alert">${failure}</p></main>`;
  if (!session) return html`<main class="center" aria-busy="true"></main>`;
  if (!session.authenticated) {
    return html`<${LoginPage} tokenHint=${session.token_hint} onSignedIn=${check} />`;
  }
  return html`<${Shell} onSignOut=${() => signOut().then(check)} />`;
}

function Shell({ onSignOut }: { onSignOut: () => void }) {
  const route = useRoute();
  return html`
    <div class="shell">
      <nav class="nav" aria-label="Pages">
        <span class="brand">guppy</span>
        ${NAV.map(
          (n) =>
            html`<a
              href=${routeHref(n.page)}
              class=${route.page === n.page ? "active" : ""}
              aria-current=${route.page === n.page ? "page" : undefined}
              >${n.label}</a
            >`,
        )}
        <button type="button" class="link sign-out" onClick=${onSignOut}>Sign out</button>
      </nav>
      <main class="page" id="page">${pageFor(route.page, route.param)}</main>
    </div>
  `;
}

function pageFor(page: PageName, param: string | undefined) {
  switch (page) {
    case "chat":
      return html`<${ChatPage} threadId=${param} />`;
    case "access":
      return html`<${AccessPage} />`;
    case "schedules":
      return html`<${SchedulesPage} />`;
    case "usage":
      return html`<${UsagePage} />`;
    case "status":
      return html`<${StatusPage} />`;
  }
}
