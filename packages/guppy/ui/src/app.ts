import { html } from "htm/preact";
import type { FunctionComponent } from "preact";
import { useEffect, useState } from "preact/hooks";
import { errorText, onSessionLost } from "./api/client.js";
import { type SessionState, seemsSignedIn, sessionState, signOut } from "./api/session.js";
import { LoginPage } from "./pages/login-page.js";
import { type PageName, routeHref, useRoute } from "./router.js";

type PageComponent = FunctionComponent<{ threadId: string | undefined }>;

/**
 * Each page is its own chunk, loaded when first shown: the sign-in form and the first page do
 * not wait for the code of the others (uPlot, the Markdown lexer).
 */
const PAGE_LOADERS: Record<PageName, () => Promise<PageComponent>> = {
  chat: () => import("./pages/chat/chat-page.js").then((m) => m.ChatPage),
  access: () => import("./pages/access-page.js").then((m) => m.AccessPage),
  schedules: () => import("./pages/schedules-page.js").then((m) => m.SchedulesPage),
  usage: () => import("./pages/usage-page.js").then((m) => m.UsagePage),
  status: () => import("./pages/status-page.js").then((m) => m.StatusPage),
};
const loadedPages = new Map<PageName, PageComponent>();

const NAV: Array<{ page: PageName; label: string }> = [
  { page: "chat", label: "Chat" },
  { page: "access", label: "Access" },
  { page: "schedules", label: "Schedules" },
  { page: "usage", label: "Usage" },
  { page: "status", label: "Status" },
];

/** The page: sign-in until the session cookie is set, then the navigation and one page. */
export function App() {
  // The page's marker cookie says a session was opened: the shell shows at once, without a
  // round trip first; a call refused for want of a session brings the sign-in back.
  const [session, setSession] = useState<SessionState | undefined>(
    seemsSignedIn() ? { authenticated: true } : undefined,
  );
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
    onSessionLost(check);
    if (!session) check();
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
      <main class="page" id="page"><${PageView} page=${route.page} param=${route.param} /></main>
    </div>
  `;
}

/** The route's page, from its chunk (loaded once, kept). */
function PageView({ page, param }: { page: PageName; param: string | undefined }) {
  const [, setLoaded] = useState(0);
  const [error, setError] = useState<string | undefined>();
  const Page = loadedPages.get(page);
  useEffect(() => {
    if (Page) return;
    let gone = false;
    PAGE_LOADERS[page]().then(
      (component) => {
        loadedPages.set(page, component);
        if (!gone) setLoaded((n) => n + 1);
      },
      (e) => {
        if (!gone) setError(`This page could not be loaded: ${errorText(e)}`);
      },
    );
    return () => {
      gone = true;
    };
  }, [page, Page]);
  if (error) return html`<p class="error" role="alert">${error}</p>`;
  if (!Page) return html`<div aria-busy="true"></div>`;
  return html`<${Page} threadId=${param} />`;
}
